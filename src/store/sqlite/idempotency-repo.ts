import { type Db, Statements } from './db.js';

export interface IdempotencyRow {
  contentSha256: string;
  /** The completed reply, as JSON, so a replay returns the same ids and content. */
  completion: string;
}

export class IdempotencyRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  get(entityId: string, key: string): IdempotencyRow | undefined {
    return this.s.get(`SELECT content_sha256 AS contentSha256, completion FROM idempotency_keys WHERE entity_id = ? AND key = ?`)
      .get(entityId, key) as IdempotencyRow | undefined;
  }

  insert(entityId: string, key: string, row: IdempotencyRow, createdAt: string): void {
    this.s.get(
        `INSERT INTO idempotency_keys (entity_id, key, content_sha256, completion, created_at) VALUES (?, ?, ?, ?, ?)`,
      )
      .run(entityId, key, row.contentSha256, row.completion, createdAt);
  }
}
