import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import { BadRequestError, CancelledError, ForbiddenError, MgptError, PayloadTooLargeError } from '../core/errors.js';
import { largeWork } from '../core/lane.js';
import type { ChunkEvent } from '../core/completion-stream.js';
import type { TurnEvent } from '../core/entity-types.js';
import type { Engine } from '../engine/engine.js';
import type { Principal, Scope } from '../engine/platform/keys.js';
import type { KeyAllowance } from '../engine/platform/rate-limits.js';

/** What every route module sees: node's request and response when served by node-server, and the app's variables. */
export type Env = {
  Bindings: Partial<HttpBindings>;
  Variables: {
    principal: Principal;
    requestId: string;
    callerRequestId: string | undefined;
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

/** What app.ts hands each route module: the key check, the body reader, and where unexpected errors go. */
export interface RouteDeps {
  /** `null`: any valid key (GET /v1/whoami). */
  auth: (scope: Scope | null) => MiddlewareHandler<Env>;
  /** The key's rate limit, after `auth`, on every route that calls a model or searches. */
  limit: MiddlewareHandler<Env>;
  body: (c: Context<Env>) => Promise<unknown>;
  onUnexpectedError?: (err: unknown) => void;
}

/** The key check for a scope: a Bearer token with it, or 401/403. */
export function authFor(engine: Engine): RouteDeps['auth'] {
  return (scope) => async (c, next) => {
    const header = c.req.header('authorization');
    const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? (header ? 'malformed' : undefined);
    const principal = await engine.keys.authenticate(token);
    if (scope !== null && !principal.scopes.includes(scope)) throw new ForbiddenError(`the API key lacks the scope ${scope}`);
    c.set('principal', principal);
    await next();
  };
}

/** A reply's last event (an entity turn's, or a reply told the same way): its usage, and the tokens it billed. */
type DoneEvent = Extract<TurnEvent | ChunkEvent, { type: 'done' }>;

/**
 * Notes a reply's tokens for the request log, and counts what it billed against its key's tokens
 * per minute before the reply ends: a client that reads the whole reply and asks again, of any
 * process or replica, is counted against them.
 */
export async function noteReply(c: Context<Env>, ev: DoneEvent): Promise<void> {
  c.set('tokens', { prompt: ev.completion.usage.prompt_tokens, completion: ev.completion.usage.completion_tokens });
  await settleTokens(c, ev.billed ?? 0);
}

/** Settles the request's token reservation to what its reply billed. The reply is stored by then: a failure to count it must not fail the reply. */
export async function settleTokens(c: Context<Env>, billed: number): Promise<void> {
  await c.get('allowance')?.settle(billed).catch(() => undefined);
}

/** A reply's events as they go out, noting its last one (`noteReply`) before it goes. */
export async function* notingReply<E extends TurnEvent | ChunkEvent>(c: Context<Env>, events: AsyncIterable<E>): AsyncGenerator<E> {
  for await (const ev of events) {
    const e: TurnEvent | ChunkEvent = ev;
    if (e.type === 'done') await noteReply(c, e);
    yield ev;
  }
}

/** The JSON body reader: application/json only, at most `limit` bytes (413 above). */
export function jsonBody(limit: number): RouteDeps['body'] {
  return async (c) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    const type = c.req.header('content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) throw new BadRequestError('Content-Type must be application/json');
    const incoming = c.env?.incoming;
    // Under node-server, read the socket's stream directly: a Web Request per body costs more than the parse.
    const buf = incoming ? await readLimited(incoming, limit, incoming) : new Uint8Array(await c.req.arrayBuffer());
    if (buf.length > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    // Large bodies are parsed one at a time, each in a turn of the event loop of its own.
    return buf.length > LARGE_BODY_BYTES ? largeWork.run(async () => parseJson(buf)) : parseJson(buf);
  };
}

/**
 * An error answer on a connection whose body was not read (a 413) must close it: kept alive, the
 * unread rest of the body would be taken for the next request and reset it (listen.ts lingers so
 * the client can read the answer). Every contract's error answer goes through this.
 */
export function closeIfBodyUnread(res: Response, err: unknown): Response {
  if (err instanceof PayloadTooLargeError) res.headers.set('Connection', 'close');
  return res;
}

/** A body this large takes milliseconds to decode and parse (and more to check). */
const LARGE_BODY_BYTES = 256 * 1024;

function parseJson(buf: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf));
  } catch {
    throw new BadRequestError('malformed JSON body');
  }
}

/** The request body, stopping (413) as soon as it passes `limit` bytes. */
async function readLimited(incoming: AsyncIterable<Buffer>, limit: number, req: { aborted?: boolean; destroyed?: boolean }): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of incoming) {
      size += part.length;
      if (size > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
      parts.push(part);
    }
  } catch (err) {
    // A client that hangs up mid-upload is a disconnect, not a server failure.
    if (!(err instanceof MgptError) && (req.aborted || req.destroyed || (err as { code?: string }).code === 'ECONNRESET')) {
      throw new CancelledError('the client closed the connection during the upload');
    }
    throw err;
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
}

export function queryInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new BadRequestError(`${name} must be an integer`, { errors: [{ field: name, message: 'must be an integer' }] });
  }
  return Number(raw);
}

export function checkFields(b: unknown, allowed: string[]): void {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new BadRequestError('the request body must be a JSON object');
  const extra = Object.keys(b).filter((k) => !allowed.includes(k));
  if (extra.length) throw new BadRequestError(`unknown fields: ${extra.join(', ')}`);
}

/** A reply returned again for its idempotency key says so (an extension; Stripe's header name). */
export function replayHeader(replayed: boolean): Record<string, string> {
  return replayed ? { 'Idempotent-Replayed': 'true' } : {};
}
