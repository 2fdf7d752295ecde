import type { MiddlewareHandler } from 'hono';
import type { Auth } from './auth.js';
import type { Env } from './env.js';
import type { BodyReader } from './json-body.js';

/**
 * What app.ts hands each route module. Each concern lives in a file of its own (auth.ts,
 * headers.ts, json-body.ts, rate-limit.ts, token-accounting.ts, request-checks.ts,
 * replay-header.ts); a route module imports what it uses from here, in one line.
 */
export interface RouteDeps {
  /** The key check for a scope; `null`: any valid key (GET /v1/whoami). */
  auth: Auth;
  /** The key's rate limit, after `auth`, on every route that calls a model or searches. */
  limit: MiddlewareHandler<Env>;
  /** The JSON body reader: a 400 for another Content-Type, a 413 over the limit. */
  body: BodyReader;
  onUnexpectedError?: (err: unknown) => void;
}

export type { Env } from './env.js';
export { header } from './headers.js';
export { closeIfBodyUnread } from './json-body.js';
export { noteReply, notingReply, settleTokens } from './token-accounting.js';
export { checkFields, queryFlag, queryInt } from './request-checks.js';
export { replayHeader } from './replay-header.js';
