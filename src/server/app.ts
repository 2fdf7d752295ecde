import { type Context, Hono } from 'hono';
import { BadRequestError, ERROR_CODE_HEADER, MgptError, NotFoundError, PaymentRequiredError, RateLimitedError, isAbortError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { requestIdFrom } from './request-id.js';
import { type RequestRecord, requestLog } from './request-log.js';
import type { ServerMetrics } from './metrics.js';
import { type Env, authFor, closeIfBodyUnread, jsonBody } from './route-deps.js';
import { rateLimitFor, refusalHeaders } from './rate-limit.js';
import { entityRoutes } from './routes/entity-routes.js';
import { memoryRoutes } from './routes/memory-routes.js';
import { healthRoutes } from './routes/health.js';
import { importRoutes } from './routes/import-routes.js';
import type { ChatPolicyOptions } from '../engine/openai/chat-service.js';
import { facadeRouteNotFound, isFacadePath, openAICompatRoutes } from './routes/openai-compat.js';
import { universeRoutes } from './routes/universe-routes.js';
import { type ConsoleHandoff, consoleRoutes } from './console.js';
import { adminRoutes } from './routes/admin-routes.js';

export interface AppOptions {
  /** Largest accepted request body in bytes (413 above). */
  bodyLimit?: number;
  /** Told about errors that are not the client's fault (they answer 500). */
  onUnexpectedError?: (err: unknown) => void;
  /** How the OpenAI facade treats clients' system messages and side requests (serve --strict-system, --side-pattern). */
  chatPolicy?: ChatPolicyOptions;
  /** Told about every request once it is answered (serve --log-format). */
  onRequest?: (r: RequestRecord) => void;
  /** Serve `GET /metrics` (Prometheus text, no key) from these; none when undefined (serve --no-metrics). */
  metrics?: ServerMetrics;
  /** Serve the console at `/` (default true; serve --no-console: false). */
  console?: boolean;
  /** The one-time handover of `mgpt console`'s key to its page. */
  consoleHandoff?: ConsoleHandoff;
}

/**
 * Both wire contracts and the OpenAI facade over the embedded engine, as a pure fetch handler (the
 * socket listener is in listen.ts): the request id, cancellation on disconnect and the error shape
 * here, one route module per contract in routes/. Validation and rules live in the engine, so
 * `mgpt serve` means exactly what the local backend means.
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
  const { onRequest, metrics } = opts;
  if (onRequest || metrics) {
    app.use('*', requestLog({
      request: (r, matched) => {
        metrics?.request(r, matched);
        onRequest?.(r);
      },
      stream: metrics && ((d) => metrics.stream(d)),
      failed: opts.onUnexpectedError,
    }));
  }
  if (metrics) app.get('/metrics', async (c) => c.body(await metrics.registry.metrics(), 200, { 'Content-Type': metrics.registry.contentType }));

  app.onError((err, c) => {
    if (!(err instanceof MgptError) && !isAbortError(err)) opts.onUnexpectedError?.(err);
    return errorResponse(c, err);
  });
  app.notFound((c) =>
    isFacadePath(c.req.path) ? facadeRouteNotFound(c) : errorResponse(c, new NotFoundError(`no route ${c.req.method} ${c.req.path}`)),
  );

  const deps = { auth: authFor(engine), limit: rateLimitFor(engine), body: jsonBody(limit), onUnexpectedError: opts.onUnexpectedError };
  // One module per contract; routes only translate HTTP to engine calls.
  app.route('/', healthRoutes(engine));
  app.route('/', openAICompatRoutes(engine, deps, opts.chatPolicy));
  app.route('/', universeRoutes(engine, deps));
  app.route('/', entityRoutes(engine, deps));
  app.route('/', memoryRoutes(engine, deps));
  app.route('/', importRoutes(engine, deps));
  app.route('/', adminRoutes(engine, deps));
  if (opts.console !== false) app.route('/', consoleRoutes(deps, opts.consoleHandoff));

  return app;
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
  // An extension on both contracts: a 503 (the database is unavailable) says what to do.
  if (known && status === 503 && err.hint) payload.hint = err.hint;
  const res = c.json(payload, status as 400, err instanceof RateLimitedError ? refusalHeaders(err) : undefined);
  res.headers.set('X-Request-Id', c.get('requestId') ?? requestIdFrom(undefined).id);
  // An extension beside both contracts' bodies, which stay as the seeds give them: the error's
  // stable code (docs/design.md#errors-and-their-codes), which the remote backend reads.
  if (known) res.headers.set(ERROR_CODE_HEADER, err.code);
  return closeIfBodyUnread(res, err);
}
