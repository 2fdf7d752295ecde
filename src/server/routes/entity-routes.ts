import { SAMPLING_FIELDS, samplingFieldsOf } from '../../core/wire/sampling.js';
import type { SearchInput } from '../../core/wire/entity-types.js';
import type { KeyIdentity } from '../../core/backend.js';
import { type Context, Hono } from 'hono';
import { BadRequestError, MgptError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';
import { type Env, type RouteDeps, checkFields, header, noteReply, notingReply, queryFlag, queryInt, replayHeader } from '../route-deps.js';
import { sseReply } from '../sse.js';
import { prepend } from '../../core/primed.js';

/** The entity contract (seed 001): every route needs mgpt.responses:create; entities belong to the key's account. */
export function entityRoutes(engine: Engine, { auth, limit, body }: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const ent = auth('mgpt.responses:create');
  app.post('/v1/entities', ent, async (c) => {
    const b = await body(c);
    const created = await engine.entities.create(b as never, c.get('principal').accountId);
    return c.json(created, 201);
  });
  app.get('/v1/entities', ent, async (c) => c.json(await engine.entities.list(c.get('principal').accountId)));
  // An extension: whose key this is, for `mgpt auth status`; any valid key may ask.
  app.get('/v1/whoami', auth(null), (c) => {
    const p = c.get('principal');
    return c.json({ object: 'api_key', id: p.keyId, account: p.accountId, user: p.userId, scopes: p.scopes } satisfies KeyIdentity);
  });
  // An extension (docs/operating.md#usage-and-generation-logs): the key's account's billing ledger, summed.
  app.get('/v1/usage', ent, async (c) => c.json(await engine.usage.report({ by: c.req.query('by'), since: c.req.query('since') }, c.get('principal').accountId)));
  app.get('/v1/entities/:id', ent, async (c) => c.json(await engine.entities.get(c.req.param('id'), c.get('principal').accountId)));
  // An extension (docs/design.md#extensions-beyond-the-wire-contracts): the engine checks the body (fields, model, types) itself.
  app.patch('/v1/entities/:id', ent, async (c) => {
    const b = await body(c);
    return c.json(await engine.entities.update(c.req.param('id'), b as never, c.get('principal').accountId), 200);
  });
  app.delete('/v1/entities/:id', ent, async (c) => c.json(await engine.entities.delete(c.req.param('id'), c.get('principal').accountId), 202));
  // An extension (docs/design.md#extensions-beyond-the-wire-contracts): the account's transcripts, or one entity's; counted in the rpm (100 large hits cost).
  app.get('/v1/search', ent, limit, async (c) => c.json(await engine.search(searchQuery(c.req), c.get('principal').accountId)));
  app.get('/v1/entities/:id/search', ent, limit, async (c) => {
    const input = { ...searchQuery(c.req), entity_ids: [c.req.param('id')] };
    return c.json(await engine.search(input, c.get('principal').accountId));
  });
  app.get('/v1/entities/:id/window', ent, async (c) => {
    // An extension: ?at=SEQ|DATE is the window a past turn saw; without it, the seed's route as it is.
    const at = c.req.query('at');
    const { accountId } = c.get('principal');
    if (at !== undefined) return c.json(await engine.entities.windowAt(c.req.param('id'), at, accountId));
    // An extension: ?prompt=true adds every part of the next turn's request, and its messages.
    if (queryFlag(c.req.query('prompt'), 'prompt')) return c.json(await engine.entities.windowPrompt(c.req.param('id'), accountId));
    return c.json(await engine.entities.window(c.req.param('id'), accountId));
  });
  // Extensions: the entity's rotation history, and steering it (one unit of work under the entity's lease;
  // counted in the rpm, as folding calls the model).
  app.get('/v1/entities/:id/rotations', ent, async (c) => c.json(await engine.entities.rotations(c.req.param('id'), c.get('principal').accountId)));
  app.post('/v1/entities/:id/rotations', ent, limit, async (c) => c.json(await engine.entities.rotate(c.req.param('id'), await body(c), c.get('principal').accountId, c.get('signal'))));
  app.get('/v1/entities/:id/messages', ent, async (c) => {
    const after = queryInt(c.req.query('after'), 'after');
    const limit = queryInt(c.req.query('limit'), 'limit');
    return c.json(await engine.entities.messages(c.req.param('id'), { after, limit }, c.get('principal').accountId));
  });
  app.get('/v1/entities/:id/export', ent, async (c) => {
    const tar = /application\/x-svc-entity/i.test(header(c, 'accept') ?? '');
    const pieces = await engine.entities.export(c.req.param('id'), tar ? 'tar' : 'json', c.get('principal').accountId);
    return c.body(streamOf(pieces), 200, { 'Content-Type': tar ? 'application/x-svc-entity' : 'application/json' });
  });
  app.post('/v1/entities/:id/messages', ent, limit, async (c) => sendMessage(engine, c, await body(c)));
  memoryClientRoutes(app, engine, { auth, limit, body });
  return app;
}

/** Extensions for MCP clients (docs/mcp.md): the ranked retriever in a budget, and an exchange stored without a model call. */
function memoryClientRoutes(app: Hono<Env>, engine: Engine, { auth, limit, body }: Pick<RouteDeps, 'auth' | 'limit' | 'body'>): void {
  const ent = auth('mgpt.responses:create');
  app.get('/v1/entities/:id/recall', ent, limit, async (c) => {
    const input = { q: c.req.query('q') ?? '', max_tokens: queryInt(c.req.query('max_tokens'), 'max_tokens') };
    return c.json(await engine.entities.recall(c.req.param('id'), input, c.get('principal').accountId));
  });
  app.post('/v1/entities/:id/exchanges', ent, limit, async (c) => c.json(await engine.entities.appendExchange(c.req.param('id'), await body(c), c.get('principal').accountId, c.get('principal').keyId), 201));
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

/** A search's query parameters: q, source, entity_id and universe_id (repeatable), role, since, limit, mode; the engine checks them. */
function searchQuery(req: { query(name: string): string | undefined; queries(name: string): string[] | undefined }): SearchInput {
  const ids = req.queries('entity_id');
  const universes = req.queries('universe_id');
  return {
    q: req.query('q') ?? '',
    source: req.query('source') as SearchInput['source'],
    ...(ids?.length ? { entity_ids: ids } : {}),
    ...(universes?.length ? { universe_ids: universes } : {}),
    role: req.query('role') as SearchInput['role'],
    since: req.query('since'),
    limit: queryInt(req.query('limit'), 'limit'),
    mode: req.query('mode') as SearchInput['mode'],
  };
}

/** POST /v1/entities/{id}/messages: one turn, streamed (SSE) or buffered (`stream: false`). */
async function sendMessage(engine: Engine, c: Context<Env>, b: unknown): Promise<Response> {
  checkFields(b, ['content', 'stream', 'idempotency_key', 'memory_tool', 'at', ...SAMPLING_FIELDS]);
  const m = b as { content?: unknown; stream?: unknown; idempotency_key?: unknown; memory_tool?: unknown; at?: unknown };
  if (m.stream !== undefined && typeof m.stream !== 'boolean') throw new BadRequestError('stream must be a boolean');
  const key = header(c, 'idempotency-key') ?? (m.idempotency_key as string | undefined);
  const id = c.req.param('id') ?? '';
  const turn = engine.entities.send(
    id,
    {
      content: m.content as string, idempotencyKey: key, signal: c.get('signal'), sampling: samplingFieldsOf(b as Record<string, unknown>), buffered: m.stream === false,
      memoryTool: m.memory_tool as boolean | undefined,
      // Checked by the engine, as a local send's is.
      at: m.at as string | undefined,
      extras: { allowance: c.get('allowance'), keyId: c.get('principal').keyId },
    },
    c.get('principal').accountId,
  );
  if (m.stream === false) {
    for await (const ev of turn) {
      if (ev.type !== 'done') continue;
      await noteReply(c, ev);
      return c.json(ev.completion, 200, { 'X-Entity-Id': id, ...replayHeader(ev.replayed) });
    }
    throw new MgptError('the turn ended without a reply');
  }
  // The first event (the start, or a replayed reply) before the headers: an early failure still gets its real status.
  const first = await turn.next();
  const replayed = !first.done && (first.value.type === 'start' || first.value.type === 'done') && first.value.replayed;
  return sseReply(c, notingReply(c, prepend(first, turn)), { 'X-Entity-Id': id, ...replayHeader(replayed) });
}
