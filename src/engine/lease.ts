import type { ConflictError } from '../core/errors.js';
import type { LeaseClaim, LeaseRow, LeaseSubject } from '../store/types.js';
import type { EngineDeps } from './deps.js';

export const entitySubject = (id: string): LeaseSubject => `entity:${id}`;
export const universeSubject = (id: string): LeaseSubject => `universe:${id}`;

/** A lease this process holds while a turn runs; see the store's LeaseStore for the row. */
export interface HeldLease {
  readonly claim: LeaseClaim;
  /** Aborted when another owner took the lease (it expired and was taken). */
  readonly lost: AbortSignal;
  /** Whether the lease is still held here: false once a write freed it or it was released. */
  readonly held: boolean;
  /**
   * Runs a unit of work under the lease (the store checks the row is still ours inside its
   * transaction). False from the store means nothing was written: `conflict()` is thrown. A write
   * that `frees` the lease (its last) stops the heartbeat.
   */
  write(unit: (claim: LeaseClaim) => Promise<boolean>, conflict: () => ConflictError, frees: boolean): Promise<void>;
  /** Stops refreshing and deletes the row (if still ours); safe to call twice, never throws. */
  release(): Promise<void>;
}

/** What a caller asks for: the subject, the request it answers, and the error a holder's row makes. */
export interface LeaseRequest {
  subject: LeaseSubject;
  key?: string;
  contentSha256?: string;
  refused: (held: LeaseRow) => Error;
}

/** Retries a refresh the database refused (SQLITE_BUSY, a dropped connection) this soon, rather than waiting a whole period. */
const BUSY_RETRY_MS = 100;

/**
 * Takes the subject's lease or throws what `refused` makes of the holder's row. The lease is
 * refreshed every third of its TTL until released or freed by a write.
 */
export async function takeLease(deps: EngineDeps, req: LeaseRequest): Promise<HeldLease> {
  const { store, clock, newId } = deps;
  const ttl = deps.limits.leaseTtlMs;
  const claim: LeaseClaim = { subject: req.subject, owner: newId() };
  const holder = await store.leases.acquire(
    { ...claim, idempotencyKey: req.key ?? null, contentSha256: req.contentSha256 ?? null, expiresAt: clock.now() + ttl },
    clock.now(),
  );
  if (holder) throw req.refused(holder);
  const lost = new AbortController();
  const period = Math.max(50, Math.floor(ttl / 3));
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const schedule = (ms: number) => {
    timer = setTimeout(refresh, ms);
    timer.unref();
  };
  const refresh = () => {
    if (done) return;
    store.leases.refresh(claim.subject, claim.owner, clock.now() + ttl).then(
      (ours) => {
        if (done) return;
        if (!ours) return lost.abort();
        schedule(period);
      },
      // The database is busy (another writer's commit): try again soon. Even if the lease expires
      // meanwhile, a write stands as long as no one else took it.
      () => {
        if (!done) schedule(BUSY_RETRY_MS);
      },
    );
  };
  schedule(period);
  const stop = () => {
    done = true;
    clearTimeout(timer);
  };
  return {
    claim,
    lost: lost.signal,
    get held() {
      return !done;
    },
    async write(unit, conflict, frees) {
      if (!(await unit(claim))) throw conflict();
      if (frees) stop();
    },
    async release() {
      if (done) return;
      stop();
      try {
        await store.leases.release(claim.subject, claim.owner);
      } catch {
        // The database is gone (process exit); the lease expires on its own.
      }
    },
  };
}

/**
 * Runs `body` while holding the subject's lease: takes it, keeps it refreshed, hands `body` a
 * signal that aborts when the caller's `signal` does or the lease is lost, and in the end frees it
 * unless a write already did, aborting whatever `body` left in flight (a consumer that stopped
 * reading, an error).
 */
export async function* withLease<T, R>(
  deps: EngineDeps,
  req: LeaseRequest,
  signal: AbortSignal | undefined,
  body: (lease: HeldLease, signal: AbortSignal) => AsyncGenerator<T, R>,
): AsyncGenerator<T, R> {
  const lease = await takeLease(deps, req);
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  lease.lost.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) abort.abort();
  try {
    return yield* body(lease, abort.signal);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    lease.lost.removeEventListener('abort', onAbort);
    if (lease.held) {
      abort.abort();
      await lease.release();
    }
  }
}
