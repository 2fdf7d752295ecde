import { Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';
import { type Env, type RouteDeps, checkFields } from '../route-deps.js';

/**
 * Pinned memory, an extension of the entity contract: GET /v1/entities/{id}/memory
 * (with `?history=true`, every change), and GET|PUT|DELETE /v1/entities/{id}/memory/{label}.
 * The engine checks labels, text and limits.
 */
export function memoryRoutes(engine: Engine, { auth, body }: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const ent = auth('mgpt.responses:create');
  app.get('/v1/entities/:id/memory', ent, async (c) => {
    const history = c.req.query('history');
    const account = c.get('principal').accountId;
    if (history === undefined || history === 'false') return c.json(await engine.memory.list(c.req.param('id'), account));
    if (history === 'true') return c.json(await engine.memory.history(c.req.param('id'), account));
    throw new BadRequestError('history must be true or false');
  });
  app.get('/v1/entities/:id/memory/:label', ent, async (c) =>
    c.json(await engine.memory.get(c.req.param('id'), c.req.param('label'), c.get('principal').accountId)),
  );
  app.put('/v1/entities/:id/memory/:label', ent, async (c) => {
    const b = await body(c);
    checkFields(b, ['text']);
    const text = (b as { text?: unknown }).text;
    if (text === undefined) throw new BadRequestError('text is required', { hint: 'send {"text": "..."}' });
    return c.json(await engine.memory.set(c.req.param('id'), c.req.param('label'), text, c.get('principal').accountId));
  });
  app.delete('/v1/entities/:id/memory/:label', ent, async (c) => {
    await engine.memory.remove(c.req.param('id'), c.req.param('label'), c.get('principal').accountId);
    return c.body(null, 204);
  });
  return app;
}
