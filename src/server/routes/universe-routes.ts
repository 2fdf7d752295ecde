import { Hono } from 'hono';
import { BadRequestError, ForbiddenError } from '../../core/errors.js';
import { parseCreateUniverse, parseImage, parseRespond } from '../../core/wire/universe-input.js';
import type { Engine } from '../../engine/engine.js';
import { billedTokens } from '../../engine/universes/respond.js';
import { type Env, type RouteDeps, queryInt, settleTokens } from '../route-deps.js';

const UNIVERSE_PREFIXES = ['/api/mgpt', '/backend-api/mgpt'];

/** The universe contract (seed 000), under both of its prefixes. Routes only translate. */
export function universeRoutes(engine: Engine, { auth, limit, body }: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  for (const prefix of UNIVERSE_PREFIXES) {
    app.post(`${prefix}/universes`, auth('mgpt.responses:create'), async (c) => {
      const created = await engine.universes.create(parseCreateUniverse(await body(c)), c.get('principal').userId);
      return c.json(created, 201);
    });
    // Extensions (for the console): the user's universes, and one's conversation (never its prompt text).
    app.get(`${prefix}/universes`, auth('mgpt.responses:create'), async (c) => c.json({ data: await engine.universes.list(c.get('principal').userId) }));
    app.get(`${prefix}/universes/:id`, auth('mgpt.responses:create'), async (c) => {
      const id = c.req.param('id');
      c.set('universeId', id);
      const userId = c.get('principal').userId;
      return c.json({ ...(await engine.universes.summary(id, userId)), runtime: (await engine.universes.doc(id, userId)).runtime });
    });
    app.post(`${prefix}/responses`, auth('mgpt.responses:create'), limit, async (c) => {
      const input = parseRespond(await body(c));
      if (typeof input.universe === 'string') c.set('universeId', input.universe);
      const res = await engine.respond(input, {
        userId: c.get('principal').userId,
        signal: c.get('signal'),
        xRequestId: c.get('callerRequestId'),
        allowance: c.get('allowance'),
      });
      c.set('tokens', { prompt: res.usageSettlement.inputTokens, completion: res.usageSettlement.outputTokens });
      await settleTokens(c, billedTokens(res));
      return c.json(res, 200);
    });
    app.post(`${prefix}/images`, auth('mgpt.images:create'), limit, async (c) => {
      return c.json(await engine.generateImage(parseImage(await body(c)), { userId: c.get('principal').userId, signal: c.get('signal') }), 200);
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
  return app;
}
