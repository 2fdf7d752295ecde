import type { MiddlewareHandler } from 'hono';
import { ForbiddenError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import type { Scope } from '../engine/platform/keys.js';
import type { Env } from './env.js';
import { header } from './headers.js';

/** The key check of a route: a scope it needs, or `null` for any valid key (GET /v1/whoami). */
export type Auth = (scope: Scope | null) => MiddlewareHandler<Env>;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The key check for a scope: a Bearer token with it, or 401/403 in the route's error shape (the
 * engine's AuthError and ForbiddenError, with their hints). Not Hono's bearerAuth: its refusals are
 * its own plain 401s, and the key lookup (cached per token and database version) is the engine's.
 */
export function authFor(engine: Engine): Auth {
  return (scope) => async (c, next) => {
    const value = header(c, 'authorization');
    const token = value?.match(BEARER)?.[1] ?? (value ? 'malformed' : undefined);
    const principal = await engine.keys.authenticate(token);
    if (scope !== null && !principal.scopes.includes(scope)) throw new ForbiddenError(`the API key lacks the scope ${scope}`);
    c.set('principal', principal);
    await next();
  };
}
