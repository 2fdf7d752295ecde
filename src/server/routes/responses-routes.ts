import { Hono } from 'hono';
import { MgptError, isAbortError } from '../../core/errors.js';
import { ResponseEventWriter, type ResponseStep, responseFrame } from '../../core/wire/response-stream.js';
import type { Engine } from '../../engine/engine.js';
import { parseListQuery } from '../../engine/openai/responses/item-pages.js';
import { type ResponseReply, requireObject } from '../../engine/openai/responses/responses-service.js';
import { TURN_HEADER } from '../../engine/openai/chat-policy.js';
import { type Env, type RouteDeps, header, noteReply } from '../route-deps.js';
import { sseEvents } from '../sse.js';
import type { Context } from 'hono';
import { type OpenAICodes, openAIError } from './openai-compat.js';

/** Where the Responses API's codes differ from the chat facade's: its 404s name no model, and a prompt too long for the model is OpenAI's context_length_exceeded. */
export const RESPONSES_CODES: OpenAICodes = { 404: null, context_overflow: 'context_length_exceeded' };

/**
 * OpenAI's Responses API on `mgpt serve` (docs/openai-clients.md#the-responses-api): POST
 * /v1/responses (buffered, or streamed as OpenAI's events), GET /v1/responses/{id}, its
 * input_items, DELETE, and POST /v1/responses/compact. Routes only translate; the rules are in
 * engine/openai/responses/.
 */
export function responsesRoutes(engine: Engine, deps: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const auth = deps.auth('mgpt.responses:create');
  const { limit } = deps;
  app.onError((err, c) => {
    if (!(err instanceof MgptError) && !isAbortError(err)) deps.onUnexpectedError?.(err);
    return openAIError(c, err, RESPONSES_CODES);
  });
  const account = (c: Context<Env>) => c.get('principal').accountId;

  app.post('/v1/responses/compact', auth, limit, async (c) => c.json(await engine.responses.compact(requireObject(await deps.body(c)), account(c), c.get('signal'))));
  app.post('/v1/responses', auth, limit, async (c) => {
    const body = requireObject(await deps.body(c));
    const principal = c.get('principal');
    const reply = await engine.responses.create(body, {
      responseId: engine.responses.newId(), idempotencyKey: header(c, 'idempotency-key'),
      accountId: principal.accountId, userId: principal.userId, signal: c.get('signal'), allowance: c.get('allowance'), keyId: principal.keyId,
    });
    return answer(c, reply, body.stream === true);
  });
  app.get('/v1/responses/:id', auth, async (c) => c.json(await engine.responses.retrieve(c.req.param('id'), account(c))));
  app.get('/v1/responses/:id/input_items', auth, async (c) =>
    c.json(await engine.responses.inputItems(c.req.param('id'), account(c), parseListQuery(c.req.query()))));
  app.delete('/v1/responses/:id', auth, async (c) => c.json(await engine.responses.delete(c.req.param('id'), account(c))));
  conversationRoutes(app, engine, deps);
  return app;
}

/** OpenAI's Conversations API: a conversation is an entity, its items the entity's messages (engine/openai/responses/conversations-service.ts). */
function conversationRoutes(app: Hono<Env>, engine: Engine, deps: RouteDeps): void {
  const auth = deps.auth('mgpt.responses:create');
  const conv = engine.conversations;
  const account = (c: Context<Env>) => c.get('principal').accountId;
  const body = async (c: Context<Env>) => requireObject(await deps.body(c));
  app.post('/v1/conversations', auth, async (c) => c.json(await conv.create(await body(c), account(c))));
  app.get('/v1/conversations/:id', auth, async (c) => c.json(await conv.retrieve(c.req.param('id'), account(c))));
  app.post('/v1/conversations/:id', auth, async (c) => c.json(await conv.update(c.req.param('id'), await body(c), account(c))));
  app.delete('/v1/conversations/:id', auth, async (c) => c.json(await conv.delete(c.req.param('id'), account(c))));
  app.get('/v1/conversations/:id/items', auth, async (c) => c.json(await conv.listItems(c.req.param('id'), parseListQuery(c.req.query()), account(c))));
  app.post('/v1/conversations/:id/items', auth, async (c) => c.json(await conv.addItems(c.req.param('id'), await body(c), account(c))));
  app.get('/v1/conversations/:id/items/:item', auth, async (c) => c.json(await conv.retrieveItem(c.req.param('id'), c.req.param('item'), account(c))));
  app.delete('/v1/conversations/:id/items/:item', auth, async (c) => c.json(await conv.deleteItem(c.req.param('id'), c.req.param('item'), account(c))));
}

/** The response as JSON once it is finished, or its events as they come. */
async function answer(c: Context<Env>, reply: ResponseReply, stream: boolean): Promise<Response> {
  const headers = replyHeaders(reply);
  if (!stream) {
    for await (const step of reply.steps) {
      if (step.type !== 'done') continue;
      await noteReply(c, step);
      return c.json(step.response, 200, headers);
    }
    throw new MgptError('the response ended without a reply');
  }
  const writer = new ResponseEventWriter();
  return sseEvents(c, noting(c, reply.steps), headers, {
    frames: (s) => writer.push(s).map(responseFrame).join(''),
    end: '',
    error: (err) => writer.fail(err instanceof MgptError ? err.message : 'internal error', err instanceof MgptError && err.status < 500 ? 'invalid_request' : 'server_error').map(responseFrame).join(''),
  });
}

/** Notes the finished response's tokens (request log, token budget) before it goes out. */
async function* noting(c: Context<Env>, steps: AsyncGenerator<ResponseStep>): AsyncGenerator<ResponseStep> {
  for await (const s of steps) {
    if (s.type === 'done') await noteReply(c, s);
    yield s;
  }
}

/** The facade's own headers, as the chat facade sends them (Mgpt-Turn, X-Entity-Id, Mgpt-Recalled...). */
function replyHeaders(reply: ResponseReply): Record<string, string> {
  const h: Record<string, string> = { [TURN_HEADER]: reply.turn };
  if (reply.entityId) h['X-Entity-Id'] = reply.entityId;
  if (reply.branchedFrom) h['Mgpt-Branched-From'] = reply.branchedFrom;
  if (reply.dropped) h['Mgpt-Dropped-Messages'] = String(reply.dropped);
  if (reply.recalled) h['Mgpt-Recalled'] = String(reply.recalled);
  if (reply.replayed) h['Idempotent-Replayed'] = 'true';
  if (reply.ignoredTools.length) h['Mgpt-Ignored-Tools'] = reply.ignoredTools.join(', ');
  return h;
}
