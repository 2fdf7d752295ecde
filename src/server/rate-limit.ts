import type { MiddlewareHandler } from 'hono';
import type { RateLimitedError } from '../core/errors.js';
import { type RateStatus, durationText } from '../core/rate-limits.js';
import type { Engine } from '../engine/engine.js';
import type { Env } from './route-deps.js';

/**
 * The rate limit of a request that calls a model (a turn, a completion, an image), after its key
 * was checked: admitted (and told what is left in OpenAI's `x-ratelimit-*` headers) or refused
 * with a 429 before its body is read, so nothing is stored or billed. The tokens a reply billed
 * are counted by the route before the reply ends (noteReply).
 */
export function rateLimitFor(engine: Engine): MiddlewareHandler<Env> {
  return async (c, next) => {
    const principal = c.get('principal');
    const status = await engine.rateLimits.admit(principal);
    if (!status) return next();
    const headers = rateHeaders(status);
    c.set('rateHeaders', headers);
    // The turn is stored by then: a failure to count it must not fail the reply.
    c.set('spendTokens', (billed) => engine.rateLimits.spend(principal, billed).catch(() => undefined));
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}

/** OpenAI's headers for what a key has left: a trio per limit it has. */
export function rateHeaders(s: RateStatus): Record<string, string> {
  const h: Record<string, string> = {};
  for (const kind of ['requests', 'tokens'] as const) {
    const w = s[kind];
    if (!w) continue;
    h[`x-ratelimit-limit-${kind}`] = String(w.limit);
    h[`x-ratelimit-remaining-${kind}`] = String(w.remaining);
    h[`x-ratelimit-reset-${kind}`] = durationText(w.resetMs);
  }
  return h;
}

/** A refusal's headers: what is left, and `Retry-After` in whole seconds (at least one). */
export function refusalHeaders(err: RateLimitedError): Record<string, string> {
  return { ...rateHeaders(err.rate), 'Retry-After': String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) };
}
