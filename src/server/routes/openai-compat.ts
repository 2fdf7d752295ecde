import { type Context, Hono } from 'hono';
import { BadRequestError, MgptError, PaymentRequiredError, RateLimitedError, isAbortError } from '../../core/errors.js';
import { BRANCH_HEADER, type ChatPolicyOptions, type ChatReply } from '../../engine/openai/chat-service.js';
import { REQUEST_HEADER, TURN_HEADER, turnOf } from '../../engine/openai/chat-policy.js';
import type { Engine } from '../../engine/engine.js';
import { type Env, type RouteDeps, closeIfBodyUnread, header, noteReply, notingReply } from '../route-deps.js';
import { sseReply } from '../sse.js';
import { refusalHeaders } from '../rate-limit.js';

/**
 * The OpenAI-compatible surface (docs/design.md#extensions-beyond-the-wire-contracts): GET /v1/models, GET /v1/models/{id},
 * POST /v1/chat/completions, answering errors in OpenAI's shape. Routes only translate; the
 * rules (targets, reconciliation, branches, stateless completions) are in engine/openai/chat-service.ts.
 */
export function openAICompatRoutes(engine: Engine, deps: RouteDeps, policy: ChatPolicyOptions = {}): Hono<Env> {
  const chat = engine.openai;
  const app = new Hono<Env>();
  const auth = deps.auth('mgpt.responses:create');
  const { limit } = deps;
  app.onError((err, c) => {
    if (!(err instanceof MgptError) && !isAbortError(err)) deps.onUnexpectedError?.(err);
    return openAIError(c, err);
  });

  app.get('/v1/models', auth, async (c) => c.json(await chat.models(c.get('principal').accountId)));
  app.get('/v1/models/:id{.+}', auth, async (c) => c.json(await chat.model(c.req.param('id'), c.get('principal').accountId)));

  app.post('/v1/chat/completions', auth, limit, async (c) => {
    const b = await deps.body(c);
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new BadRequestError('the request body must be a JSON object');
    const req = b as Record<string, unknown> & { stream?: unknown; stream_options?: { include_usage?: unknown } | null };
    if (req.stream !== undefined && req.stream !== null && typeof req.stream !== 'boolean') throw new BadRequestError('stream must be a boolean');
    const principal = c.get('principal');
    const reply = await chat.chat({
      body: req,
      idempotencyKey: header(c, 'idempotency-key'),
      branch: (header(c, BRANCH_HEADER) ?? '').toLowerCase() === 'branch',
      side: header(c, REQUEST_HEADER),
      policy,
      accountId: principal.accountId,
      userId: principal.userId,
      signal: c.get('signal'),
      allowance: c.get('allowance'),
      keyId: principal.keyId,
    });
    const headers = replyHeaders(reply);
    if (req.stream !== true) {
      for await (const ev of reply.events) {
        if (ev.type === 'start' && 'replayed' in ev && ev.replayed) headers['Idempotent-Replayed'] = 'true';
        if (ev.type !== 'done') continue;
        await noteReply(c, ev);
        headers[TURN_HEADER] = turnOf(reply.turn, ev.completion.choices[0]?.finish_reason);
        return c.json(ev.completion, 200, headers);
      }
      throw new MgptError('the turn ended without a reply');
    }
    // The usage chunk (no choices) only when asked for (`stream_options.include_usage`).
    const includeUsage = req.stream_options?.include_usage === true;
    return sseReply(c, notingReply(c, reply.events), headers, (ch) => includeUsage || ch.choices.length > 0);
  });
  return app;
}

/** How many earlier messages automatic recall put in an entity turn's prompt; absent when none. */
const RECALLED_HEADER = 'Mgpt-Recalled';

function replyHeaders(reply: ChatReply): Record<string, string> {
  const h: Record<string, string> = { [TURN_HEADER]: reply.turn };
  if (reply.entityId) h['X-Entity-Id'] = reply.entityId;
  if (reply.branchedFrom) h['Mgpt-Branched-From'] = reply.branchedFrom;
  if (reply.dropped) h['Mgpt-Dropped-Messages'] = String(reply.dropped);
  if (reply.recalled) h[RECALLED_HEADER] = String(reply.recalled);
  return h;
}

const TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['authentication_error', 'invalid_api_key'],
  402: ['insufficient_quota', 'insufficient_quota'],
  403: ['permission_error', 'insufficient_scope'],
  404: ['not_found_error', 'model_not_found'],
  409: ['conflict_error', 'conflict'],
  413: ['invalid_request_error', 'request_too_large'],
};

/** OpenAI's `code` for an error code of ours or a status, where a surface's differ from the chat facade's (TYPES). */
export type OpenAICodes = Partial<Record<string | number, string | null>>;

function openAIType(status: number, code: string | null | undefined): [type: string, code: string | null] {
  const [type, dflt] = TYPES[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
  return [type, code === undefined ? dflt : code];
}

/** The paths of the facade: whatever is answered there, a missing route too, is in OpenAI's shape. */
export function isFacadePath(path: string): boolean {
  return /^\/v1\/(models|chat|responses|conversations)(\/|$)/.test(path);
}

/** A path or method the facade does not serve, answered as OpenAI's API answers one. */
export function facadeRouteNotFound(c: Context<Env>): Response {
  const error = { message: `Invalid URL (${c.req.method} ${c.req.path})`, type: 'invalid_request_error', code: null, param: null };
  return c.json({ error }, 404);
}

/**
 * `{ error: { message, type, code } }`, OpenAI's shape (402 adds the balance fields; a rate limit
 * is OpenAI's: type `requests` or `tokens`, code `rate_limit_exceeded`, with its headers).
 */
export function openAIError(c: Context<Env>, err: unknown, codes: OpenAICodes = {}): Response {
  const known = err instanceof MgptError;
  const status = isAbortError(err) ? 499 : known ? err.status : 500;
  const message = known || isAbortError(err) ? (err as Error).message : 'internal error';
  const limited = err instanceof RateLimitedError;
  const [type, code] = limited ? [err.limit, 'rate_limit_exceeded'] : openAIType(status, known ? codes[err.code] ?? codes[status] : codes[status]);
  const error: Record<string, unknown> = { message, type, code, param: null };
  if (err instanceof PaymentRequiredError) Object.assign(error, err.details);
  if (known && status === 503 && err.hint) error.hint = err.hint;
  return closeIfBodyUnread(c.json({ error }, status as 400, limited ? refusalHeaders(err) : undefined), err);
}
