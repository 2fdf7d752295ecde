import { type Db, Statements } from './db.js';
import type { LeaseRow, LeaseSubject } from '../rows.js';

/** One writer per entity or universe, across processes: a row with owner and expiry, refreshed while a turn runs. */
export class LeaseRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  /**
   * Takes the lease unless another owner holds an unexpired one; returns that holder's row then.
   * One statement (its own atomic write, so two processes cannot both win): the upsert replaces
   * the row only when it is expired or already ours; no change means someone else holds it.
   */
  acquire(lease: LeaseRow, now: number): LeaseRow | null {
    for (;;) {
      const taken = this.s
        .get(
          `INSERT INTO turn_leases (subject, owner, idempotency_key, content_sha256, expires_at)
           VALUES (@subject, @owner, @idempotencyKey, @contentSha256, @expiresAt)
           ON CONFLICT (subject) DO UPDATE SET owner = excluded.owner,
             idempotency_key = excluded.idempotency_key, content_sha256 = excluded.content_sha256,
             expires_at = excluded.expires_at
           WHERE turn_leases.expires_at <= @now OR turn_leases.owner = excluded.owner`,
        )
        .run({ ...lease, now });
      if (taken.changes > 0) return null;
      const held = this.s
        .get(
          `SELECT subject, owner, idempotency_key AS idempotencyKey,
             content_sha256 AS contentSha256, expires_at AS expiresAt
           FROM turn_leases WHERE subject = ?`,
        )
        .get(lease.subject) as LeaseRow | undefined;
      // Freed between the two statements: try again.
      if (held) return held;
    }
  }

  /** Extends the lease; false when it is no longer ours (it expired and someone else took it). */
  refresh(subject: LeaseSubject, owner: string, expiresAt: number): boolean {
    return (
      this.s.get(`UPDATE turn_leases SET expires_at = ? WHERE subject = ? AND owner = ?`)
        .run(expiresAt, subject, owner).changes > 0
    );
  }

  /**
   * Whether the row is still ours. Expiry does not matter here: an expired lease that no one else
   * took still guards the subject, since taking it replaces the owner.
   */
  isOwned(subject: LeaseSubject, owner: string): boolean {
    return this.s.get(`SELECT 1 FROM turn_leases WHERE subject = ? AND owner = ?`).get(subject, owner) !== undefined;
  }

  release(subject: LeaseSubject, owner: string): void {
    this.s.get(`DELETE FROM turn_leases WHERE subject = ? AND owner = ?`).run(subject, owner);
  }
}
