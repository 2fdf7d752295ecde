import { type Db, Statements } from './db.js';
import type { KeyRow } from '../rows.js';
import { limitAssignments } from '../rate-sql.js';

const COLS = `id, account_id AS accountId, public_id AS publicId, secret_sha256 AS secretSha256, scopes,
  created_at AS createdAt, revoked_at AS revokedAt, rpm, tpm, expires_at AS expiresAt`;

export class KeyRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  insert(row: KeyRow): void {
    this.s
      .get(
        `INSERT INTO api_keys (id, account_id, public_id, secret_sha256, scopes, created_at, revoked_at, rpm, tpm, expires_at)
         VALUES (@id, @accountId, @publicId, @secretSha256, @scopes, @createdAt, @revokedAt, @rpm, @tpm, @expiresAt)`,
      )
      .run(row);
  }

  byPublicId(publicId: string): KeyRow | undefined {
    return this.s.get(`SELECT ${COLS} FROM api_keys WHERE public_id = ?`).get(publicId) as KeyRow | undefined;
  }

  /** Ids of keys that start with `prefix`; at most `limit`. */
  idsWithPrefix(prefix: string, limit: number): string[] {
    const rows = this.s.get(`SELECT id FROM api_keys WHERE substr(id, 1, length(?)) = ? LIMIT ?`).all(prefix, prefix, limit) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  list(): KeyRow[] {
    return this.s.get(`SELECT ${COLS} FROM api_keys ORDER BY created_at, id`).all() as KeyRow[];
  }

  setLimits(id: string, limits: Partial<Pick<KeyRow, 'rpm' | 'tpm'>>): boolean {
    const { set, values } = limitAssignments(limits, () => '?');
    if (!set) return this.s.get(`SELECT 1 FROM api_keys WHERE id = ?`).get(id) !== undefined;
    return this.s.get(`UPDATE api_keys SET ${set} WHERE id = ?`).run(...values, id).changes > 0;
  }

  renew(id: string, expiresAt: string): boolean {
    return this.s.get(`UPDATE api_keys SET expires_at = ? WHERE id = ? AND revoked_at IS NULL AND expires_at IS NOT NULL`).run(expiresAt, id).changes > 0;
  }

  revoke(id: string, at: string): boolean {
    return this.s.get(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`).run(at, id).changes > 0;
  }
}
