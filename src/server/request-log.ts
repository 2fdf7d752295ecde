import type { Context, MiddlewareHandler } from 'hono';
import type { Env } from './env.js';

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
  /** Told when building or telling a record threw: the answer has gone, so nothing else can hear of it. */
  failed?(err: unknown): void;
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
    const matched = routeOf(c.req) !== undefined;
    const tell = (gone: boolean) => on.request(recordOf(c, time, t0, gone), matched);
    if (!out || out.writableFinished) return guarded(on, () => tell(false));
    on.stream?.(1);
    // A throw in a socket's event listener is uncaught and ends the process: nothing may escape here.
    out.once('close', () => guarded(on, () => {
      on.stream?.(-1);
      tell(!out.writableFinished);
    }));
  };
}

/** The record of the request `c`: derived from the request as received, so nothing in it may be trusted to be well formed. */
function recordOf(c: Context<Env>, time: string, t0: number, gone: boolean): RequestRecord {
  const principal = c.get('principal');
  const tokens = c.get('tokens');
  const entityId = ENTITY_PATH.exec(c.req.path)?.[1] ?? c.res.headers.get('x-entity-id') ?? undefined;
  const universeId = c.get('universeId') ?? UNIVERSE_PATH.exec(c.req.path)?.[1];
  return {
    time, requestId: c.get('requestId'), method: c.req.method, route: routeOf(c.req) ?? c.req.path, status: gone ? 499 : c.res.status,
    durationMs: Math.round((performance.now() - t0) * 100) / 100,
    ...(principal ? { keyId: principal.keyId, accountId: principal.accountId } : {}),
    ...(entityId ? { entityId: decodeSegment(entityId) } : {}),
    ...(universeId ? { universeId } : {}),
    ...(tokens ? { promptTokens: tokens.prompt, completionTokens: tokens.completion } : {}),
  };
}

/** A path segment decoded; as it came when it is not valid percent-encoded UTF-8 (`%E0%A4%A`), which decodeURIComponent throws on. */
function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Runs `step`; what it throws goes to `on.failed` and no further. */
function guarded(on: RequestListener, step: () => void): void {
  try {
    step();
  } catch (err) {
    try {
      on.failed?.(err);
    } catch {
      // Whoever hears of failures failed too: losing one log line beats losing the process.
    }
  }
}

/** The registered path of the route that answered (not the catch-all middleware's `*`); undefined when none did. */
function routeOf(req: { matchedRoutes: Array<{ path: string; method: string }> }): string | undefined {
  return req.matchedRoutes.filter((r) => r.method !== 'ALL' && r.path !== '/*' && r.path !== '*').at(-1)?.path;
}
