import type { Context, MiddlewareHandler } from 'hono';
import type { RateLimitedError } from '../core/errors.js';
import { type RateStatus, durationText } from '../core/rate-limits.js';
import type { Engine } from '../engine/engine.js';
import type { KeyAllowance } from '../engine/platform/rate-limits.js';
import type { Env } from './env.js';

/**
 * The rate limit of a request that calls a model (a turn, a completion, an image) or searches, after its key
 * was checked: admitted (and told what is left in OpenAI's `x-ratelimit-*` headers) or refused
 * with a 429 before its body is read, so nothing is stored or billed. A key with tokens per minute
 * gives the request its allowance: the engine reserves from it before calling a model, and the
 * route settles it to what the reply billed before the reply ends (noteReply).
 */
export function rateLimitFor(engine: Engine): MiddlewareHandler<Env> {
  return async (c, next) => {
    const principal = c.get('principal');
    const status = await engine.rateLimits.admit(principal);
    if (!status) return next();
    const headers = rateHeaders(status);
    c.set('rateHeaders', headers);
    const allowance = engine.rateLimits.allowance(principal);
    if (allowance) c.set('allowance', allowance);
    try {
      await next();
    } finally {
      if (allowance) returnUnsettled(c, allowance);
    }
    // A refusal after admission (the engine's token reservation) carries its own, newer state.
    for (const [name, value] of Object.entries(headers)) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  };
}

/**
 * A request that ends without a reply (a failure, a cancel) billed nothing: its reservation goes
 * back once the answer is complete (a reply's own settlement, made first, is kept). Without a
 * socket to watch (the app called in-process) the reservation stands, counted as spent.
 */
function returnUnsettled(c: Context<Env>, allowance: KeyAllowance): void {
  const out = c.env?.outgoing;
  if (!out) return;
  const back = () => void allowance.settle(0).catch(() => undefined);
  if (out.writableFinished || out.destroyed) back();
  else out.once('close', back);
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
