import type { HttpBindings } from '@hono/node-server';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { CompletionChunker, SSE_DONE, sseFrame, streamErrorFrame } from '../core/completion-stream.js';
import type { TurnEvent } from '../core/entity-types.js';
import {
  BadRequestError,
  ForbiddenError,
  MgptError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  CancelledError,
  isAbortError,
} from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import type { Principal, Scope } from '../engine/keys.js';
import { requestIdFrom } from './request-id.js';
import { healthRoutes } from './routes/health.js';
import { openAICompatRoutes } from './routes/openai-compat.js';

export interface AppOptions {
  /** Largest accepted request body in bytes (413 above). */
  bodyLimit?: number;
  /** Told about errors that are not the client's fault (they answer 500). */
  onUnexpectedError?: (err: unknown) => void;
}

type Env = {
  Bindings: Partial<HttpBindings>;
  Variables: { principal: Principal; requestId: string; callerRequestId: string | undefined; signal: AbortSignal };
};

const UNIVERSE_PREFIXES = ['/api/mgpt', '/backend-api/mgpt'];
const enc = new TextEncoder();

/**
 * Both wire contracts over the embedded engine, as a pure fetch handler (the socket listener is
 * in listen.ts). Routes only translate HTTP to engine calls; validation and rules live in the
 * engine, so `mgpt serve` means exactly what the local backend means.
 */
export function createApp(engine: Engine, opts: AppOptions = {}): Hono<Env> {
  const limit = opts.bodyLimit ?? 1024 * 1024;
  const app = new Hono<Env>();

  app.use('*', async (c, next) => {
    const { id: requestId, fromCaller } = requestIdFrom(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('callerRequestId', fromCaller ? requestId : undefined);
    // Set before the route runs as well: Hono rebuilds HEAD answers from the GET route's headers.
    c.header('X-Request-Id', requestId);
    // A client that goes away cancels what it asked for (a turn then leaves no trace).
    const abort = new AbortController();
    const out = c.env?.outgoing;
    out?.once('close', () => {
      if (!out.writableFinished) abort.abort();
    });
    c.set('signal', abort.signal);
    await next();
    c.res.headers.set('X-Request-Id', requestId);
  });

  app.onError((err, c) => {
    if (!(err instanceof MgptError) && !isAbortError(err)) opts.onUnexpectedError?.(err);
    return errorResponse(c, err);
  });
  app.notFound((c) => errorResponse(c, new NotFoundError(`no route ${c.req.method} ${c.req.path}`)));

  const auth =
    (scope: Scope): MiddlewareHandler<Env> =>
    async (c, next) => {
      const header = c.req.header('authorization');
      const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? (header ? 'malformed' : undefined);
      const principal = await engine.keys.authenticate(token);
      if (!principal.scopes.includes(scope)) throw new ForbiddenError(`the API key lacks the scope ${scope}`);
      c.set('principal', principal);
      await next();
    };

  const body = async (c: Context<Env>): Promise<unknown> => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    const type = c.req.header('content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) throw new BadRequestError('Content-Type must be application/json');
    const incoming = c.env?.incoming;
    // Under node-server, read the socket's stream directly: a Web Request per body costs more than the parse.
    const buf = incoming ? await readLimited(incoming, limit, incoming) : new Uint8Array(await c.req.arrayBuffer());
    if (buf.length > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf));
    } catch {
      throw new BadRequestError('malformed JSON body');
    }
  };

  app.route('/', healthRoutes(engine));
  app.route('/', openAICompatRoutes(engine, { auth, body, onUnexpectedError: opts.onUnexpectedError }));

  // Universe routes (seed 000), under both prefixes.
  for (const prefix of UNIVERSE_PREFIXES) {
    app.post(`${prefix}/universes`, auth('mgpt.responses:create'), async (c) => {
      const created = await engine.universes.create((await body(c)) as never, c.get('principal').userId);
      return c.json(created, 201);
    });
    app.post(`${prefix}/responses`, auth('mgpt.responses:create'), async (c) => {
      const res = await engine.respond(await body(c), {
        userId: c.get('principal').userId,
        signal: c.get('signal'),
        xRequestId: c.get('callerRequestId'),
      });
      return c.json(res, 200);
    });
    app.post(`${prefix}/images`, auth('mgpt.images:create'), async (c) => {
      return c.json(await engine.generateImage(await body(c), { userId: c.get('principal').userId, signal: c.get('signal') }), 200);
    });
    app.get(`${prefix}/logs`, auth('mgpt.logs:read'), async (c) => {
      const q = c.req.query();
      const userId = c.get('principal').userId;
      if (!q.ownerUserId) throw new BadRequestError('ownerUserId is required', { errors: [{ field: 'ownerUserId', message: 'required' }] });
      if (q.ownerUserId !== userId) throw new ForbiddenError('logs of another user');
      if (q.identifier !== undefined) return c.json(await engine.logs.get(q.identifier, userId));
      return c.json(
        await engine.logs.list(
          { kind: q.kind, game: q.game, user: q.user, requestId: q.requestId, page: queryInt(q.page, 'page'), pageSize: queryInt(q.pageSize, 'pageSize') },
          userId,
        ),
      );
    });
  }

  // Entity routes (seed 001): every one needs mgpt.responses:create; entities belong to the key's account.
  const ent = auth('mgpt.responses:create');
  app.post('/v1/entities', ent, async (c) => {
    const b = await body(c);
    const created = await engine.entities.create(b as never, c.get('principal').accountId);
    return c.json(created, 201);
  });
  app.get('/v1/entities', ent, async (c) => c.json(await engine.entities.list(c.get('principal').accountId)));
  app.get('/v1/entities/:id', ent, async (c) => c.json(await engine.entities.get(c.req.param('id'), c.get('principal').accountId)));
  // An extension (SPEC section 8): the engine checks the body (fields, model, types) itself.
  app.patch('/v1/entities/:id', ent, async (c) => {
    const b = await body(c);
    return c.json(await engine.entities.update(c.req.param('id'), b as never, c.get('principal').accountId), 200);
  });
  app.delete('/v1/entities/:id', ent, async (c) => c.json(await engine.entities.delete(c.req.param('id'), c.get('principal').accountId), 202));
  app.get('/v1/entities/:id/window', ent, async (c) => c.json(await engine.entities.window(c.req.param('id'), c.get('principal').accountId)));
  app.get('/v1/entities/:id/messages', ent, async (c) => {
    const after = queryInt(c.req.query('after'), 'after');
    const limitQ = queryInt(c.req.query('limit'), 'limit');
    return c.json(await engine.entities.messages(c.req.param('id'), { after, limit: limitQ }, c.get('principal').accountId));
  });
  app.get('/v1/entities/:id/export', ent, async (c) => {
    const tar = /application\/x-svc-entity/i.test(c.req.header('accept') ?? '');
    const pieces = await engine.entities.export(c.req.param('id'), tar ? 'tar' : 'json', c.get('principal').accountId);
    return c.body(streamOf(pieces), 200, { 'Content-Type': tar ? 'application/x-svc-entity' : 'application/json' });
  });
  app.post('/v1/entities/:id/messages', ent, async (c) => {
    const b = await body(c);
    checkFields(b, ['content', 'stream', 'idempotency_key']);
    const m = b as { content?: unknown; stream?: unknown; idempotency_key?: unknown };
    if (m.stream !== undefined && typeof m.stream !== 'boolean') throw new BadRequestError('stream must be a boolean');
    const key = c.req.header('idempotency-key') ?? (m.idempotency_key as string | undefined);
    const id = c.req.param('id');
    const turn = engine.entities.send(
      id,
      { content: m.content as string, idempotencyKey: key, signal: c.get('signal') },
      c.get('principal').accountId,
    );
    if (m.stream === false) {
      for await (const ev of turn) if (ev.type === 'done') return c.json(ev.completion, 200, { 'X-Entity-Id': id, ...replayHeader(ev.replayed) });
      throw new MgptError('the turn ended without a reply');
    }
    // Wait for the first output before answering, so an early failure still gets its real status.
    const chunker = new CompletionChunker();
    const head: TurnEvent[] = [];
    for (;;) {
      const r = await turn.next();
      if (r.done) break;
      head.push(r.value);
      if (r.value.type === 'start' || r.value.type === 'done') break;
    }
    const frames = (ev: TurnEvent) => chunker.push(ev).map((ch) => enc.encode(sseFrame(ch)));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const ev of head) for (const f of frames(ev)) controller.enqueue(f);
      },
      async pull(controller) {
        try {
          const r = await turn.next();
          if (r.done) {
            controller.enqueue(enc.encode(SSE_DONE));
            controller.close();
            return;
          }
          for (const f of frames(r.value)) controller.enqueue(f);
        } catch (err) {
          // Headers are gone: the stream says why and ends without [DONE]; the turn left no trace.
          const status = err instanceof MgptError ? err.status : 500;
          const message = err instanceof MgptError ? err.message : 'internal error';
          controller.enqueue(enc.encode(sseFrame(streamErrorFrame(message, status))));
          controller.close();
        }
      },
      async cancel() {
        await turn.return(undefined);
      },
    });
    const replayed = head.some((ev) => (ev.type === 'start' || ev.type === 'done') && ev.replayed);
    return c.body(stream, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Entity-Id': id, ...replayHeader(replayed) });
  });

  return app;
}

/** A reply returned again for its idempotency key says so (an extension; Stripe's header name). */
function replayHeader(replayed: boolean): Record<string, string> {
  return replayed ? { 'Idempotent-Replayed': 'true' } : {};
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

function streamOf(pieces: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = await pieces.next();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await pieces.return(undefined);
    },
  });
}

function queryInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new BadRequestError(`${name} must be an integer`, { errors: [{ field: name, message: 'must be an integer' }] });
  }
  return Number(raw);
}

function checkFields(b: unknown, allowed: string[]): void {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new BadRequestError('the request body must be a JSON object');
  const extra = Object.keys(b).filter((k) => !allowed.includes(k));
  if (extra.length) throw new BadRequestError(`unknown fields: ${extra.join(', ')}`);
}

/** Each seed's error shape: `{ error }` on entity routes, `{ detail, errors? }` on universe routes. */
function errorResponse(c: Context<Env>, err: unknown): Response {
  const known = err instanceof MgptError;
  const status = isAbortError(err) ? 499 : known ? err.status : 500;
  const message = known || isAbortError(err) ? (err as Error).message : 'internal error';
  const entityRoute = c.req.path.startsWith('/v1/');
  let payload: Record<string, unknown>;
  if (entityRoute) {
    payload = { error: message };
    if (err instanceof PaymentRequiredError) Object.assign(payload, err.details);
  } else {
    payload = { detail: message };
    if (err instanceof BadRequestError && err.errors?.length) payload.errors = err.errors;
    if (err instanceof PaymentRequiredError) Object.assign(payload, err.details);
  }
  const res = c.json(payload, status as 400);
  res.headers.set('X-Request-Id', c.get('requestId') ?? requestIdFrom(undefined).id);
  // The body was not read: close after the answer (listen.ts lingers so the client can read it).
  if (err instanceof PayloadTooLargeError) res.headers.set('Connection', 'close');
  return res;
}
