import { ConflictError } from '../core/errors.js';
import type { LeaseRow, LeaseSubject } from '../store/types.js';
import type { EngineDeps } from './deps.js';

export const entitySubject = (id: string): LeaseSubject => `entity:${id}`;
export const universeSubject = (id: string): LeaseSubject => `universe:${id}`;

/** A lease this process holds while a turn runs; see LeaseRepo for the row. */
export interface HeldLease {
  readonly subject: LeaseSubject;
  readonly owner: string;
  /** Aborted when another owner took the lease (it expired and was taken). */
  readonly lost: AbortSignal;
  /** In the commit transaction: a ConflictError unless the row is still ours (expired or not). */
  assertOwned(conflict: () => ConflictError): void;
  /** Stops refreshing and deletes the row (if still ours); safe to call twice, never throws. */
  release(): void;
  /** Stops refreshing, for a commit that deleted the row in its own transaction. */
  stop(): void;
}

/** Retries a refresh the file refused (SQLITE_BUSY) this soon, rather than waiting a whole period. */
const BUSY_RETRY_MS = 100;

/**
 * Takes the subject's lease or throws what `refused` makes of the holder's row. The lease is
 * refreshed every third of its TTL until released.
 */
export function takeLease(
  deps: EngineDeps,
  subject: LeaseSubject,
  claim: { key?: string; contentSha256?: string },
  refused: (held: LeaseRow) => Error,
): HeldLease {
  const { store, clock, newId } = deps;
  const ttl = deps.limits.leaseTtlMs;
  const owner = newId();
  const held = store.leases.acquire(
    { subject, owner, idempotencyKey: claim.key ?? null, contentSha256: claim.contentSha256 ?? null, expiresAt: clock.now() + ttl },
    clock.now(),
  );
  if (held) throw refused(held);
  const lost = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const schedule = (ms: number) => {
    timer = setTimeout(refresh, ms);
    timer.unref();
  };
  const refresh = () => {
    if (done) return;
    try {
      if (!store.leases.refresh(subject, owner, clock.now() + ttl)) return lost.abort();
    } catch {
      // The file is busy (another writer's commit): try again soon. Even if the lease expires
      // meanwhile, the commit stands as long as no one else took it.
      return schedule(BUSY_RETRY_MS);
    }
    schedule(Math.max(50, Math.floor(ttl / 3)));
  };
  schedule(Math.max(50, Math.floor(ttl / 3)));
  const stop = () => {
    done = true;
    clearTimeout(timer);
  };
  return {
    subject,
    owner,
    lost: lost.signal,
    assertOwned(conflict) {
      if (!store.leases.isOwned(subject, owner)) throw conflict();
    },
    release() {
      if (done) return;
      stop();
      try {
        store.leases.release(subject, owner);
      } catch {
        // The database is gone (process exit); the lease expires on its own.
      }
    },
    stop,
  };
}
