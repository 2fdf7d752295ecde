import { BadRequestError, RateLimitedError } from '../../core/errors.js';
import { MAX_RATE_LIMIT, type RateLimits, type RateStatus, type RateWindow, type TokenAllowance, durationText } from '../../core/rate-limits.js';
import type { Sampling } from '../../providers/spec.js';
import type { RateGate, RateState } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import type { Principal } from './principal.js';

/** What rate limits read: the store, and the observer told of refusals. */
type RateDeps = Pick<EngineDeps, 'store' | 'events'>;

/** Limits are per minute. */
const PERIOD_MS = 60_000;

/**
 * Rate limits per API key (an extension, after OpenAI's): requests and tokens per minute, each a
 * bucket that holds a minute's allowance and refills continuously (one request every 60/rpm
 * seconds). A request is admitted while its key has a request left and some of its token
 * allowance; before it calls a model it reserves what the call may bill (KeyAllowance), and the
 * reservation is settled to what it billed before its reply's last bytes go out, so a turn already
 * under way is never cut. The counting is the store's (one statement on the database's clock), so
 * every process and replica on one database shares each key's limits.
 */
export class RateLimitService {
  /**
   * Each key's last refusal, until its wait ends. Meanwhile the key is refused again without a
   * query: its state in the store only moves further out (other processes' admissions and spends
   * add to it, nothing takes away), so the store would refuse it too. Kept per limits: a limit
   * changed by the operator is asked of the store at once.
   */
  private readonly refused = new Map<string, Refused>();

  constructor(private readonly deps: RateDeps) {}

  /**
   * Admits one request of the principal's key, with what it left (undefined: the key has no
   * limits); a RateLimitedError (429) when it is over, and then nothing is counted.
   */
  async admit(p: Principal): Promise<RateStatus | undefined> {
    const { rpm, tpm } = p.limits;
    if (rpm === null && tpm === null) return undefined;
    const again = this.refusedAgain(p);
    if (again) return this.refuse(again);
    const gate: RateGate = { requestMs: rpm ? PERIOD_MS / rpm : 0, tokens: tpm !== null, periodMs: PERIOD_MS };
    const state = await this.deps.store.rates.admit(p.keyId, gate);
    const status = statusOf(state, p.limits);
    if (state.admitted) return status;
    const refusal = refusalOf(state, gate, status, p.keyId);
    this.remember(p, refusal);
    return this.refuse(refusal);
  }

  private refuse(err: RateLimitedError): never {
    this.deps.events.rateLimited(err.limit);
    throw err;
  }

  private remember(p: Principal, err: RateLimitedError): void {
    if (this.refused.size >= MAX_REMEMBERED) this.refused.clear();
    this.refused.set(p.keyId, { limits: limitsKey(p.limits), at: performance.now(), err });
  }

  /** The key's remembered refusal as it stands now, while its wait lasts. */
  private refusedAgain(p: Principal): RateLimitedError | undefined {
    const r = this.refused.get(p.keyId);
    if (!r) return undefined;
    const elapsed = performance.now() - r.at;
    if (r.limits !== limitsKey(p.limits) || elapsed >= r.err.retryAfterMs) {
      this.refused.delete(p.keyId);
      return undefined;
    }
    return later(r.err, elapsed);
  }

  /** The request's share of the principal's tokens per minute; undefined when its key has no such limit. */
  allowance(p: Principal): KeyAllowance | undefined {
    return p.limits.tpm === null ? undefined : new KeyAllowance(this.deps, p.keyId, p.limits.tpm, (err) => this.refuse(err));
  }
}

/**
 * A TokenAllowance of one key: reserved by the engine before it calls a model, settled by the
 * server once (to what the request billed, or to nothing when it failed) when the answer ends.
 */
export class KeyAllowance implements TokenAllowance {
  private reserved = 0;
  private settled = false;

  constructor(
    private readonly deps: RateDeps,
    private readonly keyId: string,
    readonly limit: number,
    private readonly refuse: (err: RateLimitedError) => never,
  ) {}

  async reserve(tokens: number): Promise<void> {
    const state = await this.deps.store.rates.reserve(this.keyId, this.ms(tokens), PERIOD_MS);
    if (!state.admitted) {
      const gate: RateGate = { requestMs: 0, tokens: true, periodMs: PERIOD_MS };
      this.refuse(refusalOf(state, gate, statusOf(state, { rpm: null, tpm: this.limit }), this.keyId));
    }
    this.reserved += tokens;
  }

  /** Counts what the request billed against the key, less what it reserved (which is returned when it billed less). */
  async settle(billed: number): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const extra = billed - this.reserved;
    if (extra !== 0) await this.deps.store.rates.spend(this.keyId, this.ms(extra));
  }

  private ms(tokens: number): number {
    return (tokens * PERIOD_MS) / this.limit;
  }
}

/**
 * A model call's sampling under `allowance` (none: as it is), after reserving the call's input and
 * its reply's bound: a reply is not allowed more than the key's tokens per minute, so the call's
 * max tokens are at most that (the route's own ceiling still applies below it).
 */
export async function reserveReply(allowance: TokenAllowance | undefined, inputTokens: number, sampling: Sampling | undefined): Promise<Sampling | undefined> {
  if (!allowance) return sampling;
  const maxTokens = Math.min(sampling?.maxTokens ?? allowance.limit, allowance.limit);
  await allowance.reserve(inputTokens + maxTokens);
  return { ...sampling, maxTokens };
}

/** How many keys' refusals a process remembers at most. */
const MAX_REMEMBERED = 10_000;

interface Refused {
  limits: string;
  /** When it was refused (performance.now()). */
  at: number;
  err: RateLimitedError;
}

const limitsKey = (l: RateLimits) => `${l.rpm}/${l.tpm}`;

/** A refusal `elapsed` ms on: the same limit, with its waits that much shorter. */
function later(err: RateLimitedError, elapsed: number): RateLimitedError {
  const shorter = (w: RateWindow | undefined) => w && { ...w, resetMs: Math.max(0, w.resetMs - elapsed) };
  const rate: RateStatus = { ...(err.rate.requests ? { requests: shorter(err.rate.requests) } : {}), ...(err.rate.tokens ? { tokens: shorter(err.rate.tokens) } : {}) };
  return refusal(err.limit, err.retryAfterMs - elapsed, rate, err.hint);
}

/**
 * Limits as given to `keys create|update` or `accounts update`: a positive whole number, or null
 * to clear; an absent one is left as it is.
 */
export function checkLimits(limits: Partial<RateLimits>): Partial<RateLimits> {
  for (const name of ['rpm', 'tpm'] as const) {
    const v = limits[name];
    if (v === undefined || v === null) continue;
    if (!Number.isSafeInteger(v) || v < 1 || v > MAX_RATE_LIMIT) {
      throw new BadRequestError(`${name} must be a whole number from 1 to ${MAX_RATE_LIMIT}, or none to clear it`, {
        errors: [{ field: name, message: 'must be a positive whole number or null' }],
      });
    }
  }
  return limits;
}

/** What the key has left after this request (or, refused, as it stands). */
function statusOf(s: RateState, limits: RateLimits): RateStatus {
  const window = (limit: number, tat: number): RateWindow => {
    const used = Math.max(tat - s.now, 0);
    const remaining = Math.floor(((PERIOD_MS - used) * limit) / PERIOD_MS + 1e-6);
    return { limit, remaining: Math.min(limit, Math.max(0, remaining)), resetMs: used };
  };
  return {
    ...(limits.rpm !== null ? { requests: window(limits.rpm, s.requestTat) } : {}),
    ...(limits.tpm !== null ? { tokens: window(limits.tpm, s.tokenTat) } : {}),
  };
}

/**
 * Why a request was refused, and when it would be admitted: the later of its limits' waits. The
 * state may be read a moment after the refusal (PostgreSQL: a second statement), when the wait
 * has run out: the limit is then still one the key has.
 */
function refusalOf(s: RateState, g: RateGate, status: RateStatus, keyId: string): RateLimitedError {
  const requestWait = g.requestMs ? Math.max(s.requestTat, s.now) + g.requestMs - PERIOD_MS - s.now : -Infinity;
  const tokenWait = g.tokens ? s.tokenTat - PERIOD_MS - s.now + 1 : -Infinity;
  const limit = requestWait >= tokenWait ? 'requests' : 'tokens';
  const hint = `the server's operator sets the limit: mgpt keys update ${keyId} --${limit === 'requests' ? 'rpm' : 'tpm'} N`;
  return refusal(limit, Math.max(requestWait, tokenWait, 0), status, hint);
}

/**
 * A refusal is an answer, not a fault: it is made without a stack trace, whose capture was the
 * largest part of a refused request's own cost (a profile of refusals under load: 7% of the CPU).
 */
function refusal(limit: 'requests' | 'tokens', wait: number, status: RateStatus, hint: string | undefined): RateLimitedError {
  const w = status[limit]!;
  const what = limit === 'requests' ? 'requests per minute (rpm)' : 'tokens per minute (tpm)';
  const message = `rate limit reached for ${what}: limit ${w.limit}, remaining ${w.remaining}; try again in ${durationText(wait)}`;
  const depth = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RateLimitedError(message, limit, wait, status, { hint });
  } finally {
    Error.stackTraceLimit = depth;
  }
}
