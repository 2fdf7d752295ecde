import { CancelledError } from './errors.js';

/**
 * The one retry policy (openai-node's shouldRetry/retryRequest), shared by the model providers and
 * the remote backend: what is retried, how long to wait, and a wait that Ctrl-C cuts short.
 */
export interface RetryOptions {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** The first backoff; each retry doubles it. */
  baseMs: number;
  /** The longest wait, also for a server's Retry-After; a longer Retry-After is not waited for. */
  maxDelayMs?: number;
}

export const MAX_RETRY_DELAY_MS = 60_000;

/** Connection failures worth another attempt. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** Failures that prove the request never reached the server: safe to retry even a create. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT']);

/** What one attempt ended with: an HTTP status, or the error thrown instead of a response. */
export type Outcome = { status: number } | { error: unknown };

/**
 * Whether an attempt is worth repeating. 408 and 429 were refused unprocessed, so any request may be
 * repeated; 5xx and connection errors only when repeating cannot duplicate anything (`idempotent`:
 * GET/HEAD/DELETE, or a key the server deduplicates); a refused connection never reached the server.
 */
export function shouldRetry(o: Outcome, opts: { idempotent: boolean }): boolean {
  if ('status' in o) return o.status === 408 || o.status === 429 || (o.status >= 500 && opts.idempotent);
  const code = errorCode(o.error);
  if (NEVER_SENT_CODES.has(code)) return true;
  return opts.idempotent && CONNECTION_CODES.has(code);
}

/** The error's code, also when undici wraps it in `cause`. */
export function errorCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : '';
  return code;
}

/**
 * Milliseconds to wait before retry number `attempt` (0 for the first): the server's Retry-After
 * (seconds or an HTTP date) when given, else exponential backoff. Undefined when the server asks
 * for longer than `maxDelayMs`: waiting less would only be refused again.
 */
export function retryDelay(attempt: number, opts: RetryOptions, retryAfter?: string, now = Date.now()): number | undefined {
  const max = opts.maxDelayMs ?? MAX_RETRY_DELAY_MS;
  const asked = parseRetryAfter(retryAfter, now);
  if (asked !== undefined) return asked > max ? undefined : asked;
  return Math.min(opts.baseMs * 2 ** attempt, max);
}

/** A Retry-After header in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Waits `ms`; an abort ends the wait with a CancelledError. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One attempt's result for `retrying`: a value, or an error and whether the policy would repeat it. */
export type Attempt<T> = { value: T } | { failure: Error; retry: boolean; retryAfter?: string };

/**
 * Runs `attempt` until it gives a value, the policy says stop, or the retries are used up; then
 * throws the last failure (`onGiveUp` may replace it, e.g. to say the server kept rate limiting).
 */
export async function retrying<T>(
  opts: RetryOptions & {
    signal?: AbortSignal;
    /** May replace the failure thrown (`retryAfter`: the last answer's Retry-After, as sent). */
    onGiveUp?: (failure: Error, why: 'not-retryable' | 'exhausted' | 'too-long', retryAfter?: string) => Error;
    /** Told before each wait for another attempt: the failure, and how long the wait is. */
    onWait?: (failure: Error, ms: number) => void;
  },
  attempt: (n: number) => Promise<Attempt<T>>,
): Promise<T> {
  for (let n = 0; ; n++) {
    const r = await attempt(n);
    if ('value' in r) return r.value;
    const giveUp = (why: 'not-retryable' | 'exhausted' | 'too-long') => opts.onGiveUp?.(r.failure, why, r.retryAfter) ?? r.failure;
    if (!r.retry) throw giveUp('not-retryable');
    if (n >= opts.maxRetries) throw giveUp('exhausted');
    const delay = retryDelay(n, opts, r.retryAfter);
    if (delay === undefined) throw giveUp('too-long');
    opts.onWait?.(r.failure, delay);
    await sleep(delay, opts.signal);
  }
}
