import type { Pool } from 'pg';
import type { AccountRow, AccountStore, CompletionKey, LedgerRow, LedgerSum, LedgerSumQuery, LogRow } from '../types.js';
import { ledgerGroupColumn, ledgerGroupOrder } from '../ledger-sql.js';
import { inTransaction } from './pg-db.js';
import { StatementBatch } from './pg-batch.js';
import { charge } from './pg-entity-store.js';
import { insertLog } from './pg-log-store.js';
import { limitAssignments } from '../rate-sql.js';

const ACCOUNT_COLS = `id, name, balance_usd AS "balanceUsd", user_id AS "userId", created_at AS "createdAt", rpm, tpm`;

/** Accounts, their prepaid balances and the billing ledger. */
export class PgAccountStore implements AccountStore {
  constructor(private readonly pool: Pool) {}

  async get(id: string): Promise<AccountRow | undefined> {
    return (await this.pool.query<AccountRow>(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE id = $1`, [id])).rows[0];
  }

  async byName(name: string): Promise<AccountRow | undefined> {
    return (await this.pool.query<AccountRow>(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE name = $1`, [name])).rows[0];
  }

  async list(): Promise<AccountRow[]> {
    return (await this.pool.query<AccountRow>(`SELECT ${ACCOUNT_COLS} FROM accounts ORDER BY created_at, id`)).rows;
  }

  async insert(row: AccountRow): Promise<void> {
    await this.pool.query(`INSERT INTO accounts (id, name, balance_usd, user_id, created_at, rpm, tpm) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      row.id, row.name, row.balanceUsd, row.userId, row.createdAt, row.rpm, row.tpm,
    ]);
  }

  async setLimits(id: string, limits: Partial<Pick<AccountRow, 'rpm' | 'tpm'>>): Promise<boolean> {
    const { set, values } = limitAssignments(limits, (i) => `$${i}`);
    if (!set) return (await this.get(id)) !== undefined;
    return ((await this.pool.query(`UPDATE accounts SET ${set} WHERE id = $${values.length + 1}`, [...values, id])).rowCount ?? 0) > 0;
  }

  /** Adds to the balance; an unmetered account (NULL) starts from zero. */
  async topup(id: string, usd: number): Promise<void> {
    await this.pool.query(
      `UPDATE accounts SET balance_usd = round((coalesce(balance_usd, 0) + $1::double precision)::numeric, 8)::double precision
       WHERE id = $2`,
      [usd, id],
    );
  }

  /** The ledger row and the balance move together or not at all. */
  async charge(row: LedgerRow): Promise<void> {
    await inTransaction(this.pool, (c) => charge(c, row));
  }

  /** Without a key, the ledger row, the balance and the log record are one statement (atomic alone); with one, a transaction that writes the key first. */
  async chargeWithLog(row: LedgerRow, log: LogRow, key?: CompletionKey): Promise<boolean> {
    const batch = new StatementBatch();
    await charge(batch, row);
    await insertLog(batch, log);
    if (!key) {
      await batch.send(this.pool);
      return true;
    }
    return inTransaction(this.pool, async (c) => {
      // The key first: when it is taken (another replica stored it first), nothing else is written.
      const r = await c.query(
        `INSERT INTO completion_keys (account_id, key, content_sha256, completion, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, key) DO NOTHING`,
        [row.accountId, key.key, key.row.contentSha256, key.row.completion, key.createdAt],
      );
      if (!r.rowCount) return false;
      await batch.send(c);
      return true;
    });
  }

  async ledger(accountId: string): Promise<LedgerRow[]> {
    const { rows } = await this.pool.query<LedgerRow>(
      `SELECT account_id AS "accountId", entity_id AS "entityId", key_id AS "keyId", model, input_tokens AS "inputTokens",
         output_tokens AS "outputTokens", cost_usd AS "costUsd", created_at AS "createdAt"
       FROM ledger WHERE account_id = $1 ORDER BY id`,
      [accountId],
    );
    return rows;
  }

  async ledgerSums(q: LedgerSumQuery): Promise<LedgerSum[]> {
    const { rows } = await this.pool.query<LedgerSum>(
      `SELECT ${ledgerGroupColumn(q.by)} AS "group", count(*)::int AS charges, sum(input_tokens)::float8 AS "inputTokens",
         sum(output_tokens)::float8 AS "outputTokens", sum(cost_usd)::float8 AS "costUsd"
       FROM ledger WHERE account_id = $1 AND ($2::text IS NULL OR created_at >= $2)
       GROUP BY 1 ORDER BY ${ledgerGroupOrder(q.by)}`,
      [q.accountId, q.since ?? null],
    );
    return rows;
  }
}
