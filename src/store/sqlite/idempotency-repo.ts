import { type Db, Statements } from './db.js';
import type { IdempotencyRow } from '../rows.js';

export class IdempotencyRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  get(entityId: string, key: string): IdempotencyRow | undefined {
    return this.s.get(`SELECT content_sha256 AS contentSha256, completion FROM idempotency_keys WHERE entity_id = ? AND key = ?`)
      .get(entityId, key) as IdempotencyRow | undefined;
  }

  completion(accountId: string, key: string): IdempotencyRow | undefined {
    return this.s.get(`SELECT content_sha256 AS contentSha256, completion FROM completion_keys WHERE account_id = ? AND key = ?`)
      .get(accountId, key) as IdempotencyRow | undefined;
  }

  /** False when the account's key is already taken. */
  insertCompletion(accountId: string, key: string, row: IdempotencyRow, createdAt: string): boolean {
    const r = this.s.get(
        `INSERT INTO completion_keys (account_id, key, content_sha256, completion, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (account_id, key) DO NOTHING`,
      )
      .run(accountId, key, row.contentSha256, row.completion, createdAt);
    return r.changes > 0;
  }

  insert(entityId: string, key: string, row: IdempotencyRow, createdAt: string): void {
    this.s.get(
        `INSERT INTO idempotency_keys (entity_id, key, content_sha256, completion, created_at) VALUES (?, ?, ?, ?, ?)`,
      )
      .run(entityId, key, row.contentSha256, row.completion, createdAt);
  }
}
