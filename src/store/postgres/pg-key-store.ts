import type { Pool } from 'pg';
import type { KeyRow, KeyStore } from '../types.js';
import { limitAssignments } from '../rate-sql.js';

const COLS = `id, account_id AS "accountId", public_id AS "publicId", secret_sha256 AS "secretSha256", scopes,
  created_at AS "createdAt", revoked_at AS "revokedAt", rpm, tpm, expires_at AS "expiresAt"`;

/** API keys; a revocation is one committed row, so every replica refuses the key on its next lookup. */
export class PgKeyStore implements KeyStore {
  constructor(private readonly pool: Pool) {}

  async insert(row: KeyRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO api_keys (id, account_id, public_id, secret_sha256, scopes, created_at, revoked_at, rpm, tpm, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [row.id, row.accountId, row.publicId, row.secretSha256, row.scopes, row.createdAt, row.revokedAt, row.rpm, row.tpm, row.expiresAt],
    );
  }

  async byPublicId(publicId: string): Promise<KeyRow | undefined> {
    return (await this.pool.query<KeyRow>(`SELECT ${COLS} FROM api_keys WHERE public_id = $1`, [publicId])).rows[0];
  }

  async idsWithPrefix(prefix: string, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM api_keys WHERE starts_with(id, $1) LIMIT $2`, [prefix, limit]);
    return rows.map((r) => r.id);
  }

  async list(): Promise<KeyRow[]> {
    return (await this.pool.query<KeyRow>(`SELECT ${COLS} FROM api_keys ORDER BY created_at, id`)).rows;
  }

  async setLimits(id: string, limits: Partial<Pick<KeyRow, 'rpm' | 'tpm'>>): Promise<boolean> {
    const { set, values } = limitAssignments(limits, (i) => `$${i}`);
    const sql = set ? `UPDATE api_keys SET ${set} WHERE id = $${values.length + 1}` : `SELECT 1 FROM api_keys WHERE id = $1`;
    return ((await this.pool.query(sql, [...values, id])).rowCount ?? 0) > 0;
  }

  async renew(id: string, expiresAt: string): Promise<boolean> {
    const r = await this.pool.query(`UPDATE api_keys SET expires_at = $1 WHERE id = $2 AND revoked_at IS NULL AND expires_at IS NOT NULL`, [expiresAt, id]);
    return (r.rowCount ?? 0) > 0;
  }

  async revoke(id: string, at: string): Promise<boolean> {
    const r = await this.pool.query(`UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, [at, id]);
    return (r.rowCount ?? 0) > 0;
  }
}
