import type { Pool } from 'pg';
import type { LeaseRow, LeaseStore, LeaseSubject } from '../types.js';
import { inTransaction, type Queryable } from './pg-db.js';

const LEASE_COLS = `subject, owner, idempotency_key AS "idempotencyKey", content_sha256 AS "contentSha256", expires_at AS "expiresAt"`;

/** One writer per entity or universe across replicas: a row with owner and expiry. */
export class PgLeaseStore implements LeaseStore {
  constructor(private readonly pool: Pool) {}

  /**
   * One upsert decides, so two replicas cannot both win: it takes a free, expired or already-ours
   * row, and otherwise locks the holder's row (ON CONFLICT locks it even when its WHERE is false).
   * A win is that one statement, committed alone (a turn's usual case: one round trip). A refusal
   * reads the holder in a transaction with a second try of the upsert, so the holder read is the
   * one that won; a holder gone between the two (its turn ended) lets the second try take the row.
   */
  async acquire(lease: LeaseRow, now: number): Promise<LeaseRow | null> {
    if (await take(this.pool, lease, now)) return null;
    return inTransaction(this.pool, async (c) => {
      if (await take(c, lease, now)) return null;
      const { rows } = await c.query<LeaseRow>(`SELECT ${LEASE_COLS} FROM turn_leases WHERE subject = $1`, [lease.subject]);
      return rows[0] ?? null;
    });
  }

  async refresh(subject: LeaseSubject, owner: string, expiresAt: number): Promise<boolean> {
    const r = await this.pool.query(`UPDATE turn_leases SET expires_at = $1 WHERE subject = $2 AND owner = $3`, [expiresAt, subject, owner]);
    return (r.rowCount ?? 0) > 0;
  }

  async release(subject: LeaseSubject, owner: string): Promise<void> {
    await this.pool.query(`DELETE FROM turn_leases WHERE subject = $1 AND owner = $2`, [subject, owner]);
  }
}

/** The upsert that takes the lease: true when this owner holds it now. */
async function take(q: Queryable, lease: LeaseRow, now: number): Promise<boolean> {
  const taken = await q.query(
    `INSERT INTO turn_leases (subject, owner, idempotency_key, content_sha256, expires_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (subject) DO UPDATE SET owner = excluded.owner, idempotency_key = excluded.idempotency_key,
       content_sha256 = excluded.content_sha256, expires_at = excluded.expires_at
     WHERE turn_leases.expires_at <= $6 OR turn_leases.owner = excluded.owner
     RETURNING 1`,
    [lease.subject, lease.owner, lease.idempotencyKey, lease.contentSha256, lease.expiresAt, now],
  );
  return taken.rows.length > 0;
}
