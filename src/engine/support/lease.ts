import type { ConflictError } from '../../core/errors.js';
import type { LeaseClaim, LeaseRow, LeaseSubject } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';

/** What a lease reads: the store, the clock, the lease TTL and ids. */
type LeaseDeps = Pick<EngineDeps, 'store' | 'clock' | 'limits' | 'newId'>;

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
export async function takeLease(deps: LeaseDeps, req: LeaseRequest): Promise<HeldLease> {
  const ttl = deps.limits.leaseTtlMs;
  const claim: LeaseClaim = { subject: req.subject, owner: deps.newId() };
  const now = deps.clock.now();
  const holder = await deps.store.leases.acquire(
    { ...claim, idempotencyKey: req.key ?? null, contentSha256: req.contentSha256 ?? null, expiresAt: now + ttl },
    now,
  );
  if (holder) throw req.refused(holder);
  return new Lease(deps, claim, ttl);
}

/** A held lease and its heartbeat. */
class Lease implements HeldLease {
  private readonly lostController = new AbortController();
  private readonly period: number;
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(
    private readonly deps: LeaseDeps,
    readonly claim: LeaseClaim,
    private readonly ttl: number,
  ) {
    this.period = Math.max(50, Math.floor(ttl / 3));
    this.schedule(this.period);
  }

  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  get held(): boolean {
    return !this.done;
  }

  async write(unit: (claim: LeaseClaim) => Promise<boolean>, conflict: () => ConflictError, frees: boolean): Promise<void> {
    if (!(await unit(this.claim))) throw conflict();
    if (frees) this.stop();
  }

  async release(): Promise<void> {
    if (this.done) return;
    this.stop();
    try {
      await this.deps.store.leases.release(this.claim.subject, this.claim.owner);
    } catch {
      // The database is gone (process exit); the lease expires on its own.
    }
  }

  private stop(): void {
    this.done = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.refresh(), ms);
    this.timer.unref();
  }

  private refresh(): void {
    if (this.done) return;
    const { store, clock } = this.deps;
    store.leases.refresh(this.claim.subject, this.claim.owner, clock.now() + this.ttl).then(
      (ours) => {
        if (this.done) return;
        if (!ours) return this.lostController.abort();
        this.schedule(this.period);
      },
      // The database is busy (another writer's commit): try again soon. Even if the lease expires
      // meanwhile, a write stands as long as no one else took it.
      () => {
        if (!this.done) this.schedule(BUSY_RETRY_MS);
      },
    );
  }
}

/**
 * Runs `body` while holding the subject's lease: takes it, keeps it refreshed, hands `body` a
 * signal that aborts when the caller's `signal` does or the lease is lost, and in the end frees it
 * unless a write already did, aborting whatever `body` left in flight (a consumer that stopped
 * reading, an error).
 */
export async function* withLease<T, R>(
  deps: LeaseDeps,
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
