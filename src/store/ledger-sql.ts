import type { LedgerSumQuery } from './rows.js';

/** The ledger column (or day of its time) a usage report groups by; the same text in SQLite and PostgreSQL. */
export function ledgerGroupColumn(by: LedgerSumQuery['by']): string {
  if (by === 'day') return 'substr(created_at, 1, 10)';
  if (by === 'key') return 'key_id';
  return by === 'model' ? 'model' : 'entity_id';
}

/** Days read newest first; models, entities and keys by what they cost. */
export function ledgerGroupOrder(by: LedgerSumQuery['by']): string {
  return by === 'day' ? '1 DESC' : '5 DESC, 1';
}
