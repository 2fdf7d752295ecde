import { type Db, Statements } from './db.js';
import type { AccountRow, LedgerRow, LedgerSum, LedgerSumQuery } from '../rows.js';
import { ledgerGroupColumn, ledgerGroupOrder } from '../ledger-sql.js';
import { limitAssignments } from '../rate-sql.js';

const ACCOUNT_COLS = `id, name, balance_usd AS balanceUsd, user_id AS userId, created_at AS createdAt, rpm, tpm`;

/** Accounts, their prepaid balances and the billing ledger. */
export class AccountRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  get(id: string): AccountRow | undefined {
    return this.s.get(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE id = ?`).get(id) as AccountRow | undefined;
  }

  byName(name: string): AccountRow | undefined {
    return this.s.get(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE name = ?`).get(name) as AccountRow | undefined;
  }

  list(): AccountRow[] {
    return this.s.get(`SELECT ${ACCOUNT_COLS} FROM accounts ORDER BY created_at, id`).all() as AccountRow[];
  }

  insert(row: AccountRow): void {
    this.s.get(`INSERT INTO accounts (id, name, balance_usd, user_id, created_at, rpm, tpm) VALUES (@id, @name, @balanceUsd, @userId, @createdAt, @rpm, @tpm)`)
      .run(row);
  }

  setLimits(id: string, limits: Partial<Pick<AccountRow, 'rpm' | 'tpm'>>): boolean {
    const { set, values } = limitAssignments(limits, () => '?');
    if (!set) return this.get(id) !== undefined;
    return this.s.get(`UPDATE accounts SET ${set} WHERE id = ?`).run(...values, id).changes > 0;
  }

  /** Adds to the balance; an unmetered account (NULL) starts from zero. */
  topup(id: string, usd: number): void {
    this.s.get(`UPDATE accounts SET balance_usd = round(coalesce(balance_usd, 0) + ?, 8) WHERE id = ?`).run(usd, id);
  }

  /** Records a charge; the balance moves only when the account is metered. */
  charge(row: LedgerRow): void {
    this.s.get(
        `INSERT INTO ledger (account_id, entity_id, key_id, model, input_tokens, output_tokens, cost_usd, created_at)
         VALUES (@accountId, @entityId, @keyId, @model, @inputTokens, @outputTokens, @costUsd, @createdAt)`,
      )
      .run({ ...row, keyId: row.keyId ?? null });
    this.s.get(`UPDATE accounts SET balance_usd = round(balance_usd - ?, 8) WHERE id = ? AND balance_usd IS NOT NULL`)
      .run(row.costUsd, row.accountId);
  }

  ledger(accountId: string): LedgerRow[] {
    return this.s.get(
        `SELECT account_id AS accountId, entity_id AS entityId, key_id AS keyId, model, input_tokens AS inputTokens,
           output_tokens AS outputTokens, cost_usd AS costUsd, created_at AS createdAt
         FROM ledger WHERE account_id = ? ORDER BY id`,
      )
      .all(accountId) as LedgerRow[];
  }

  /** The ledger summed by day, model or entity (see AccountStore.ledgerSums). */
  ledgerSums(q: LedgerSumQuery): LedgerSum[] {
    return this.s.get(
        `SELECT ${ledgerGroupColumn(q.by)} AS "group", count(*) AS charges, sum(input_tokens) AS inputTokens,
           sum(output_tokens) AS outputTokens, sum(cost_usd) AS costUsd
         FROM ledger WHERE account_id = @accountId AND (@since IS NULL OR created_at >= @since)
         GROUP BY 1 ORDER BY ${ledgerGroupOrder(q.by)}`,
      )
      .all({ accountId: q.accountId, since: q.since ?? null }) as LedgerSum[];
  }
}
