import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { AuthError, BadRequestError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { SCOPES } from '../engine/platform/keys.js';
import type { Env, RouteDeps } from './route-deps.js';

/**
 * The console's page and its two assets, built by scripts/build.mjs into dist/console/. No inline
 * script or style anywhere, so the policy allows only the server's own files; generated images are
 * shown from `data:` URLs the page makes from the API's base64.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSETS: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The headers of every console answer (the API's JSON needs none of them). */
export function consoleHeaders(type: string): Record<string, string> {
  return {
    'Content-Type': type,
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}

/**
 * dist/console/ beside the server bundle (dist/server.cjs); from the sources (tests), the built
 * one at the project's root. Undefined when the console was not built.
 */
function loadAssets(): Map<string, Buffer> | undefined {
  for (const dir of ['./console/', '../../dist/console/']) {
    try {
      const files = new Map<string, Buffer>();
      for (const name of Object.keys(ASSETS)) files.set(name, readFileSync(new URL(dir + name, import.meta.url)));
      return files;
    } catch {
      // Not here: the next place.
    }
  }
  return undefined;
}

/** One-time handover of the key `mgpt console` made: its code is in the URL's fragment, the key never is. */
export interface ConsoleHandoff {
  code: string;
  key: string;
  keyId: string;
  /** Stops renewing the key (before it is revoked, at the console's end). */
  stopRenewing(): void;
}

/**
 * How long a console's key works after its last renewal. The console revokes its key when it stops,
 * but a console killed outright (SIGKILL, a crash, the machine losing power) cannot: its full-admin
 * key then stops working this long after, on its own.
 */
export const CONSOLE_KEY_LIFETIME_MS = 5 * 60_000;

/**
 * A key for one `mgpt console` session (every scope, on the local account), expiring `lifetimeMs`
 * after its last renewal and renewed three times a lifetime while this process runs (so a missed
 * renewal or two, a busy database, does not end the session), and the one-time code that hands it
 * to the page: POST /console/handoff answers the key once, then never again.
 */
export async function startConsoleSession(engine: Engine, lifetimeMs = CONSOLE_KEY_LIFETIME_MS): Promise<ConsoleHandoff> {
  const info = await engine.keys.create('local', [...SCOPES], {}, { lifetimeMs });
  const renewal = setInterval(() => void engine.keys.renew(info.id, lifetimeMs).catch(() => {}), Math.max(100, Math.floor(lifetimeMs / 3)));
  renewal.unref();
  return { code: randomBytes(24).toString('base64url'), key: info.key!, keyId: info.id, stopRenewing: () => clearInterval(renewal) };
}

/** `GET /` (the page), `GET /console/*` (its script and style), and the handover when `mgpt console` started the server. */
export function consoleRoutes(deps: RouteDeps, handoff?: ConsoleHandoff): Hono<Env> {
  const app = new Hono<Env>();
  const assets = loadAssets();
  const page = (name: string) => () => {
    const body = assets?.get(name);
    if (!body) {
      return new Response('The console is not built: run npm run build.\n', { status: 503, headers: consoleHeaders('text/plain; charset=utf-8') });
    }
    return new Response(new Uint8Array(body), { status: 200, headers: consoleHeaders(ASSETS[name]) });
  };
  app.get('/', page('index.html'));
  app.get('/favicon.ico', () => new Response(null, { status: 204 }));
  app.get('/console/app.js', page('app.js'));
  app.get('/console/app.css', page('app.css'));
  let pending = handoff;
  app.post('/console/handoff', async (c) => {
    const b = (await deps.body(c)) as { code?: unknown };
    if (typeof b?.code !== 'string') throw new BadRequestError('code must be a string');
    const given = Buffer.from(b.code);
    const wanted = Buffer.from(pending?.code ?? '');
    if (!pending || given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      throw new AuthError('this sign-in code was used already or is unknown', { hint: 'run mgpt console again, or sign in with a key (mgpt keys create)' });
    }
    const key = pending.key;
    pending = undefined;
    return c.json({ key }, 200, { 'Cache-Control': 'no-store' });
  });
  return app;
}
