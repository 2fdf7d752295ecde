import type { Pool } from 'pg';
import type { IdempotencyRow, IdempotencyStore } from '../types.js';

/** Completed replies by Idempotency-Key (written by commitTurn, read by any replica). */
export class PgIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: Pool) {}

  async get(entityId: string, key: string): Promise<IdempotencyRow | undefined> {
    const { rows } = await this.pool.query<IdempotencyRow>(
      `SELECT content_sha256 AS "contentSha256", completion FROM idempotency_keys WHERE entity_id = $1 AND key = $2`,
      [entityId, key],
    );
    return rows[0];
  }

  async completion(accountId: string, key: string): Promise<IdempotencyRow | undefined> {
    const { rows } = await this.pool.query<IdempotencyRow>(
      `SELECT content_sha256 AS "contentSha256", completion FROM completion_keys WHERE account_id = $1 AND key = $2`,
      [accountId, key],
    );
    return rows[0];
  }
}
