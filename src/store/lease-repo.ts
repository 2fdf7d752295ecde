import { type Db, Statements } from './db.js';

export interface LeaseRow {
  entityId: string;
  owner: string;
  idempotencyKey: string | null;
  contentSha256: string | null;
  expiresAt: number;
}

/** One writer per entity, across processes: a row with owner and expiry, refreshed while a turn runs. */
export class LeaseRepo {
  private readonly s: Statements;
  private readonly acquireTx;
  constructor(db: Db) {
    this.s = new Statements(db);
    this.acquireTx = db.transaction((lease: LeaseRow, now: number): LeaseRow | null => {
      const held = this.s
        .get(
          `SELECT entity_id AS entityId, owner, idempotency_key AS idempotencyKey,
             content_sha256 AS contentSha256, expires_at AS expiresAt
           FROM turn_leases WHERE entity_id = ?`,
        )
        .get(lease.entityId) as LeaseRow | undefined;
      if (held && held.expiresAt > now && held.owner !== lease.owner) return held;
      this.s
        .get(
          `INSERT INTO turn_leases (entity_id, owner, idempotency_key, content_sha256, expires_at)
           VALUES (@entityId, @owner, @idempotencyKey, @contentSha256, @expiresAt)
           ON CONFLICT (entity_id) DO UPDATE SET owner = excluded.owner,
             idempotency_key = excluded.idempotency_key, content_sha256 = excluded.content_sha256,
             expires_at = excluded.expires_at`,
        )
        .run(lease);
      return null;
    });
  }

  /**
   * Takes the lease unless another owner holds an unexpired one; returns that holder's row then.
   * Runs in its own IMMEDIATE transaction so two processes cannot both win.
   */
  acquire(lease: LeaseRow, now: number): LeaseRow | null {
    return this.acquireTx.immediate(lease, now);
  }

  /** Extends the lease; false when it is no longer ours (it expired and someone else took it). */
  refresh(entityId: string, owner: string, expiresAt: number): boolean {
    return (
      this.s.get(`UPDATE turn_leases SET expires_at = ? WHERE entity_id = ? AND owner = ?`)
        .run(expiresAt, entityId, owner).changes > 0
    );
  }

  isHeld(entityId: string, owner: string, now: number): boolean {
    return (
      this.s.get(`SELECT 1 FROM turn_leases WHERE entity_id = ? AND owner = ? AND expires_at > ?`)
        .get(entityId, owner, now) !== undefined
    );
  }

  release(entityId: string, owner: string): void {
    this.s.get(`DELETE FROM turn_leases WHERE entity_id = ? AND owner = ?`).run(entityId, owner);
  }
}
