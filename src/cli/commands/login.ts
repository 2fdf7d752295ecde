import type { Command } from 'commander';
import { activeProfileName } from '../../config/config.js';
import type { ConfigFile } from '../../config/schema.js';
import { maskSecret, parseValue } from '../../config/schema.js';
import { openConfigStore } from '../../config/store.js';
import { AuthError, BadRequestError, ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { readStdin } from '../input.js';
import { note, printJson } from '../output.js';

interface LoginOptions {
  baseUrl?: string;
  entitiesUrl?: string;
  key?: string;
  userId?: string;
  json?: boolean;
}

export function registerLogin(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('login')
      .description('use a remote mgpt (hosted, or mgpt serve): check the key against it, then store it (mode 0600)')
      .option('--base-url <url>', 'universe API base URL (alone: an mgpt serve, whose entity API is <url>/v1)')
      .option('--entities-url <url>', 'entity API URL, ending in /v1 (alone: an mgpt serve, whose universe API is the same server)')
      .option('--key <key>', 'API key (default: read from stdin)')
      .option('--user-id <id>', 'your user id (scopes the logs endpoint)')
      .option('--json', 'JSON output'),
    [
      'mgpt login --base-url http://127.0.0.1:8080 --key mgpt_live_…',
      'mgpt login --base-url http://127.0.0.1:8080 --entities-url http://127.0.0.1:8080/v1 --key mgpt_live_…',
      'echo "$MGPT_KEY" | mgpt login --base-url https://mgpt.example.com --entities-url https://entities.example.com/v1',
    ],
  ).action((o: LoginOptions) => runLogin(ctx, o));
  examples(program.command('logout').description("forget what login stored (the key, the server's URLs, the user id) and use the local backend again"), ['mgpt logout']).action(() =>
    runLogout(ctx),
  );
}

export async function runLogin(ctx: CliContext, o: LoginOptions): Promise<void> {
  const key = (o.key ?? (ctx.io.stdinIsTTY ? undefined : (await readStdin(ctx)).trim())) || undefined;
  if (!key) throw new BadRequestError('no API key given', { hint: 'pass --key KEY, or pipe it on stdin' });
  const settings = ctx.settings();
  // The URLs given are the server; a URL left from an earlier login is not mixed in.
  const given = o.baseUrl !== undefined || o.entitiesUrl !== undefined;
  const urls = { baseUrl: given ? o.baseUrl : settings.baseUrl, entitiesUrl: given ? o.entitiesUrl : settings.entitiesUrl };
  if (!urls.baseUrl && !urls.entitiesUrl) throw new BadRequestError('no server URL', { hint: 'pass --base-url and/or --entities-url' });
  checkUrls(urls);
  const { baseUrl, entitiesUrl } = await completeUrls(urls, key, settings.dev);
  checkUrls({ baseUrl, entitiesUrl });
  const { RemoteBackend } = await import('../../backends/remote/remote-backend.js');
  const remote = new RemoteBackend({ baseUrl, entitiesUrl, apiKey: key, dev: settings.dev, maxRetries: 0 });
  // Authentication comes before validation on the server: an empty request tells a bad key (401)
  // from a good one (400) without creating anything.
  const checks: string[] = [];
  try {
    if (entitiesUrl) {
      await remote.listEntities();
      checks.push('entities');
    }
    if (baseUrl) {
      await remote.checkUniverseAccess();
      checks.push('universes');
    }
  } catch (err) {
    if (err instanceof AuthError) throw new AuthError(`the server refused the key: ${err.message}`, { hint: 'create one with mgpt keys create on the server host' });
    if (!(err instanceof ForbiddenError)) throw err;
    note(ctx, `note: ${err.message}`);
  }
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const at = `profiles.${profile}`;
  store.set(`${at}.backend`, 'remote');
  store.set(`${at}.apiKey`, key);
  for (const [name, v] of [['baseUrl', baseUrl], ['entitiesUrl', entitiesUrl], ['userId', o.userId]] as const) {
    if (v) store.set(`${at}.${name}`, name === 'userId' ? v : v.replace(/\/+$/, ''));
    else store.delete(`${at}.${name}`);
  }
  const summary = { profile, backend: 'remote', baseUrl: baseUrl ?? null, entitiesUrl: entitiesUrl ?? null, apiKey: maskSecret(key), checked: checks };
  if (o.json) return printJson(ctx.io, summary);
  ctx.io.stderr.write(`logged in (profile ${profile}, key ${summary.apiKey}); commands now use the remote backend\n`);
}

function checkUrls(urls: { baseUrl?: string; entitiesUrl?: string }): void {
  for (const [name, v] of [['baseUrl', urls.baseUrl], ['entitiesUrl', urls.entitiesUrl]] as const) {
    if (v) {
      const parsed = parseValue(name, v);
      if ('error' in parsed) throw new BadRequestError(parsed.error);
    }
  }
}

/**
 * One URL is enough for an mgpt serve, which answers both APIs on one origin: the other URL is
 * derived, and GET /v1/whoami (which only mgpt serve answers) confirms it. Elsewhere the missing
 * URL must be given, so login never says "signed in" to a half it cannot reach.
 */
async function completeUrls(urls: { baseUrl?: string; entitiesUrl?: string }, key: string, dev?: boolean): Promise<{ baseUrl?: string; entitiesUrl?: string }> {
  if (urls.baseUrl && urls.entitiesUrl) return urls;
  const origin = (urls.baseUrl ?? urls.entitiesUrl!).replace(/\/+$/, '').replace(/\/v1$/, '');
  const derived = { baseUrl: urls.baseUrl ?? origin, entitiesUrl: urls.entitiesUrl ?? `${origin}/v1` };
  const { RemoteBackend } = await import('../../backends/remote/remote-backend.js');
  try {
    await new RemoteBackend({ entitiesUrl: derived.entitiesUrl, apiKey: key, dev, maxRetries: 0 }).whoami();
    return derived;
  } catch (err) {
    if (err instanceof AuthError) throw new AuthError(`the server refused the key: ${err.message}`, { hint: 'create one with mgpt keys create on the server host' });
    if (!(err instanceof NotFoundError)) throw err;
    const missing = urls.baseUrl ? '--entities-url' : '--base-url';
    throw new BadRequestError(`${urls.baseUrl ?? urls.entitiesUrl} is not an mgpt serve answering both APIs (GET ${derived.entitiesUrl}/whoami: not found)`, {
      hint: `pass ${missing} too`,
    });
  }
}

/** What login sets, and so what logout clears: the next login starts from nothing. */
const LOGIN_KEYS = ['backend', 'apiKey', 'baseUrl', 'entitiesUrl', 'userId'] as const;

export async function runLogout(ctx: CliContext): Promise<void> {
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const had = store.has(`profiles.${profile}.apiKey`);
  for (const key of LOGIN_KEYS) store.delete(`profiles.${profile}.${key}`);
  ctx.io.stderr.write(had ? `logged out (profile ${profile}); commands use the local backend\n` : `no stored key in profile ${profile}\n`);
}
