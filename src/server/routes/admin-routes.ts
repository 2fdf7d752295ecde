import { Hono } from 'hono';
import { BadRequestError } from '../../core/errors.js';
import type { RateLimits } from '../../core/rate-limits.js';
import type { Engine } from '../../engine/engine.js';
import { type Env, type RouteDeps, checkFields } from '../route-deps.js';

/**
 * Keys and limits over HTTP (an extension: the console's keys page), for a key with the
 * scope `mgpt.admin`: what `mgpt keys` and `mgpt accounts` do on the server's machine. A new key's
 * secret is in the create answer only; the list never has it. The engine checks every value.
 */
export function adminRoutes(engine: Engine, { auth, body }: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const admin = auth('mgpt.admin');
  app.get('/v1/keys', admin, async (c) => c.json({ object: 'list', data: await engine.keys.list() }));
  app.post('/v1/keys', admin, async (c) => {
    const b = await body(c);
    checkFields(b, ['account', 'scopes', 'rpm', 'tpm']);
    const { account, scopes, ...limits } = b as { account?: unknown; scopes?: unknown; rpm?: unknown; tpm?: unknown };
    if (typeof account !== 'string') throw new BadRequestError('account must be a string (an account name or id)');
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string')) throw new BadRequestError('scopes must be an array of strings');
    return c.json(await engine.keys.create(account, scopes as string[], limitsOf(limits)), 201);
  });
  app.patch('/v1/keys/:id', admin, async (c) => {
    const b = await body(c);
    checkFields(b, ['rpm', 'tpm']);
    return c.json(await engine.keys.update(c.req.param('id'), limitsOf(b as Record<string, unknown>)));
  });
  app.delete('/v1/keys/:id', admin, async (c) => c.json(await engine.keys.revoke(c.req.param('id'))));
  app.get('/v1/accounts', admin, async (c) => c.json({ object: 'list', data: await engine.accounts.list() }));
  app.patch('/v1/accounts/:id', admin, async (c) => {
    const b = await body(c);
    checkFields(b, ['rpm', 'tpm']);
    return c.json(await engine.accounts.update(c.req.param('id'), limitsOf(b as Record<string, unknown>)));
  });
  return app;
}

/** `rpm` and `tpm`: a whole number, or null for none (the account's default, on a key). */
function limitsOf(b: Record<string, unknown>): Partial<RateLimits> {
  const out: Partial<RateLimits> = {};
  for (const k of ['rpm', 'tpm'] as const) {
    if (!(k in b)) continue;
    const v = b[k];
    if (v !== null && (typeof v !== 'number' || !Number.isSafeInteger(v))) throw new BadRequestError(`${k} must be a whole number or null`);
    out[k] = v as number | null;
  }
  return out;
}
