/**
 * Rate limits per API key (an extension; OpenAI's requests and tokens per minute): what a key or
 * its account allows, and what a request found left. No HTTP here: the server turns these into
 * `x-ratelimit-*` headers and `Retry-After`.
 */

/** Requests and tokens per minute; null: no limit of its own (a key then takes its account's). */
export interface RateLimits {
  rpm: number | null;
  tpm: number | null;
}

/** One limit as a request found it: the limit, what is left after this request, and when it is whole again. */
export interface RateWindow {
  limit: number;
  remaining: number;
  /** Milliseconds until the whole minute's allowance is back. */
  resetMs: number;
}

/** What a limited key has left: one window per limit it has. */
export interface RateStatus {
  requests?: RateWindow;
  tokens?: RateWindow;
}

/** The largest limit accepted (a billion a minute is no limit anyone needs). */
export const MAX_RATE_LIMIT = 1_000_000_000;

/** A duration as OpenAI's headers write it (Go's style): `20ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.round(ms / 10) / 100;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = Math.round((total % 60) * 100) / 100;
  if (h) return `${h}h${m}m${s}s`;
  return m ? `${m}m${s}s` : `${s}s`;
}

/**
 * One request's share of its key's tokens per minute. Before a model is called, what its reply may
 * bill is reserved (the input plus the reply's bound), so concurrent requests see each other's
 * reservations and together overspend by one reservation at most; the reservation is settled to
 * what the request billed when it ends. A RateLimitedError (429) when none of the allowance is left.
 */
export interface TokenAllowance {
  /** The key's tokens per minute: no reply is allowed more than this (OpenAI refuses a larger max_tokens). */
  readonly limit: number;
  reserve(tokens: number): Promise<void>;
}
