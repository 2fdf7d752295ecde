import type { HttpBindings } from '@hono/node-server';
import type { Principal } from '../engine/platform/keys.js';
import type { KeyAllowance } from '../engine/platform/rate-limits.js';

/**
 * What every middleware and route module sees: node's request and response when served by
 * node-server (absent when the app is called in-process, as `app.request` in tests), and the
 * variables the middleware sets for the routes.
 */
export type Env = {
  Bindings: Partial<HttpBindings>;
  Variables: {
    /** The key's owner and scopes (auth.ts). */
    principal: Principal;
    /** The caller's X-Request-Id when sane, else a fresh one (request-id.ts). */
    requestId: string;
    /** The caller's own X-Request-Id, when it sent a sane one. */
    callerRequestId: string | undefined;
    /** Aborts when the client goes away before its answer is complete (disconnect.ts). */
    signal: AbortSignal;
    /** What a route knows for the request log: the universe it served, and its reply's usage. */
    universeId?: string;
    tokens?: { prompt: number; completion: number };
    /** What the key has left (`x-ratelimit-*`), for answers written to the socket directly. */
    rateHeaders?: Record<string, string>;
    /** The request's share of its key's tokens per minute (set when the key has that limit): reserved by the engine, settled by noteReply. */
    allowance?: KeyAllowance;
  };
};
