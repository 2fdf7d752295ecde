import { Hono } from 'hono';
import { MgptError, NotFoundError, isAbortError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { authFor } from './auth.js';
import { cancelOnDisconnect } from './disconnect.js';
import type { Env } from './env.js';
import { errorResponse } from './error-response.js';
import { jsonBody } from './json-body.js';
import { requestIds } from './request-id.js';
import { type RequestRecord, requestLog } from './request-log.js';
import type { ServerMetrics } from './metrics.js';
import { rateLimitFor } from './rate-limit.js';
import { entityRoutes } from './routes/entity-routes.js';
import { memoryRoutes } from './routes/memory-routes.js';
import { healthRoutes } from './routes/health.js';
import { importRoutes } from './routes/import-routes.js';
import type { ChatPolicyOptions } from '../engine/openai/chat-service.js';
import { facadeRouteNotFound, isFacadePath, openAICompatRoutes } from './routes/openai-compat.js';
import { universeRoutes } from './routes/universe-routes.js';
import { responsesRoutes } from './routes/responses-routes.js';
import { type ConsoleHandoff, consoleRoutes } from './console.js';
import { adminRoutes } from './routes/admin-routes.js';
import { type McpRouteOptions, mcpRoutes } from './routes/mcp-routes.js';

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
  /** Serve MCP at /mcp (default: on, without send; serve --no-mcp: false). */
  mcp?: false | McpRouteOptions;
  /** The one-time handover of `mgpt console`'s key to its page. */
  consoleHandoff?: ConsoleHandoff;
}

/**
 * Both wire contracts and the OpenAI facade over the embedded engine, as a pure fetch handler (the
 * socket listener is in listen.ts), composed from one file per concern: the request id
 * (request-id.ts), cancellation on disconnect (disconnect.ts), the request log and metrics
 * (request-log.ts, metrics.ts), the key check (auth.ts), the rate limit (rate-limit.ts), the body
 * reader (json-body.ts) and the error shape (error-response.ts); one route module per contract in
 * routes/. Validation and rules live in the engine, so `mgpt serve` means exactly what the local
 * backend means.
 */
export function createApp(engine: Engine, opts: AppOptions = {}): Hono<Env> {
  const limit = opts.bodyLimit ?? 1024 * 1024;
  const app = new Hono<Env>();

  app.use('*', requestIds(), cancelOnDisconnect());
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
  app.route('/', responsesRoutes(engine, deps));
  app.route('/', universeRoutes(engine, deps));
  app.route('/', entityRoutes(engine, deps));
  app.route('/', memoryRoutes(engine, deps));
  app.route('/', importRoutes(engine, deps));
  app.route('/', adminRoutes(engine, deps));
  if (opts.mcp !== false) app.route('/', mcpRoutes(engine, deps, opts.mcp ?? { allowSend: false, version: engine.deps.version }));
  if (opts.console !== false) app.route('/', consoleRoutes(deps, opts.consoleHandoff));

  return app;
}
