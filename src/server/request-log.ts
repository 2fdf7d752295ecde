import type { MiddlewareHandler } from 'hono';
import type { Env } from './route-deps.js';

/** One request as `mgpt serve --log-format` writes it: never a key's secret, never a message. */
export interface RequestRecord {
  /** When the request arrived (ISO 8601). */
  time: string;
  requestId: string;
  method: string;
  /** The route that answered, as registered (`/v1/entities/:id/messages`); the path when none did. */
  route: string;
  /** 499 when the client went away before the answer was complete. */
  status: number;
  durationMs: number;
  keyId?: string;
  accountId?: string;
  entityId?: string;
  universeId?: string;
  promptTokens?: number;
  completionTokens?: number;
}

const ENTITY_PATH = /^\/v1\/entities\/([^/]+)/;
const UNIVERSE_PATH = /\/universes\/([^/]+)/;

/** Who hears about requests: each one once answered (`matched`: a registered route answered it), and streams as they start and end. */
export interface RequestListener {
  request(r: RequestRecord, matched: boolean): void;
  stream?(delta: 1 | -1): void;
}

/**
 * Tells `on` about every request once its answer is complete: a streamed one when its last byte
 * is written (or its client went away), any other when it is answered.
 */
export function requestLog(on: RequestListener): MiddlewareHandler<Env> {
  return async (c, next) => {
    const t0 = performance.now();
    const time = new Date().toISOString();
    await next();
    const out = c.env?.outgoing;
    const record = (gone: boolean): RequestRecord => {
      const principal = c.get('principal');
      const tokens = c.get('tokens');
      const entityId = ENTITY_PATH.exec(c.req.path)?.[1] ?? c.res.headers.get('x-entity-id') ?? undefined;
      const universeId = c.get('universeId') ?? UNIVERSE_PATH.exec(c.req.path)?.[1];
      return {
        time, requestId: c.get('requestId'), method: c.req.method, route: routeOf(c.req) ?? c.req.path, status: gone ? 499 : c.res.status,
        durationMs: Math.round((performance.now() - t0) * 100) / 100,
        ...(principal ? { keyId: principal.keyId, accountId: principal.accountId } : {}),
        ...(entityId ? { entityId: decodeURIComponent(entityId) } : {}),
        ...(universeId ? { universeId } : {}),
        ...(tokens ? { promptTokens: tokens.prompt, completionTokens: tokens.completion } : {}),
      };
    };
    const matched = routeOf(c.req) !== undefined;
    if (!out || out.writableFinished) return on.request(record(false), matched);
    on.stream?.(1);
    out.once('close', () => {
      on.stream?.(-1);
      on.request(record(!out.writableFinished), matched);
    });
  };
}

/** The registered path of the route that answered (not the catch-all middleware's `*`); undefined when none did. */
function routeOf(req: { matchedRoutes: Array<{ path: string; method: string }> }): string | undefined {
  return req.matchedRoutes.filter((r) => r.method !== 'ALL' && r.path !== '/*' && r.path !== '*').at(-1)?.path;
}
