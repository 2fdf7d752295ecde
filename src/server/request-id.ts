import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Env } from './env.js';
import { header } from './headers.js';

const SANE = /^[\x21-\x7e]{1,200}$/;

/** The caller's X-Request-Id when it is sane (1-200 visible ASCII characters), else a fresh id. */
export function requestIdFrom(value: string | undefined): { id: string; fromCaller: boolean } {
  return value !== undefined && SANE.test(value) ? { id: value, fromCaller: true } : { id: randomUUID(), fromCaller: false };
}

/**
 * Gives every request an id (`requestId`; `callerRequestId` when the caller sent a sane one) and
 * every answer its X-Request-Id. Not Hono's requestId middleware: it accepts only `[\w\-=]` up to
 * 255 characters, so a caller's id with a dot or a colon (a trace id) would be replaced, and it
 * does not say whether the id was the caller's (the universe contract stores only a caller's).
 */
export function requestIds(): MiddlewareHandler<Env> {
  return async (c, next) => {
    const { id, fromCaller } = requestIdFrom(header(c, 'x-request-id'));
    c.set('requestId', id);
    c.set('callerRequestId', fromCaller ? id : undefined);
    // Set before the route runs as well: Hono rebuilds HEAD answers from the GET route's headers.
    c.header('X-Request-Id', id);
    await next();
    c.res.headers.set('X-Request-Id', id);
  };
}

const UNIVERSE_PREFIXES = ['/api/mgpt/', '/backend-api/mgpt/'];

/** An error body in the shape of the path's route family: `{ detail }` on universe routes, `{ error }` elsewhere. */
export function errorBodyFor(path: string | undefined, message: string): Record<string, string> {
  return path && UNIVERSE_PREFIXES.some((p) => path.startsWith(p)) ? { detail: message } : { error: message };
}
