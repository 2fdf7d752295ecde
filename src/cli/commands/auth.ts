import type { Command } from 'commander';
import { maskSecret } from '../../config/schema.js';
import { AuthError, ForbiddenError, MgptError, NotFoundError, exitCodeOf } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { colors, printJson, sanitizeForTerminal as safe } from '../output.js';

export interface AuthStatusOptions {
  json?: boolean;
}

/** `mgpt auth status --json`. */
export interface AuthStatus {
  profile: string;
  backend: 'local' | 'remote';
  signedIn: boolean;
  baseUrl: string | null;
  entitiesUrl: string | null;
  key: string | null;
  /** The key's account, as the server says (null: not asked, or a server without GET /v1/whoami). */
  account: string | null;
  scopes: string[] | null;
  /** The server answered the key (with it accepted or refused). */
  reachable: boolean;
  error: string | null;
}

export function registerAuth(program: Command, ctx: CliContext): void {
  const auth = examples(program.command('auth').description('see where you are signed in (mgpt login and mgpt logout change it)'), [
    'mgpt auth status',
  ]);
  examples(
    auth
      .command('status')
      .description('where commands go, as whom (the key\'s account) and whether the server answers; exit 0 signed in and answering, 1 not signed in, 3 key refused, 7 server unreachable')
      .option('--json', 'JSON output: { profile, backend, signedIn, baseUrl, entitiesUrl, key, account, scopes, reachable, error }'),
    ['mgpt auth status', 'mgpt auth status --json', 'mgpt auth status >/dev/null 2>&1 && echo signed in'],
  ).action((o: AuthStatusOptions) => runAuthStatus(ctx, o));
}

/** Checks the stored (or environment's) remote settings against the server, as gh auth status does. */
export async function runAuthStatus(ctx: CliContext, o: AuthStatusOptions): Promise<void> {
  const s = ctx.settings();
  const status: AuthStatus = {
    profile: s.profile,
    backend: s.backend,
    signedIn: false,
    baseUrl: s.baseUrl ?? null,
    entitiesUrl: s.entitiesUrl ?? null,
    key: s.apiKey ? maskSecret(s.apiKey) : null,
    account: null,
    scopes: null,
    reachable: false,
    error: null,
  };
  if (s.backend === 'remote' && s.apiKey && (s.baseUrl || s.entitiesUrl)) await check(ctx, status);
  else ctx.exitCode = 1;
  if (o.json) return printJson(ctx.io, status);
  print(ctx, status);
}

async function check(ctx: CliContext, status: AuthStatus): Promise<void> {
  const s = ctx.settings();
  const { RemoteBackend } = await import('../../backends/remote/remote-backend.js');
  const remote = new RemoteBackend({ baseUrl: s.baseUrl, entitiesUrl: s.entitiesUrl, apiKey: s.apiKey, dev: s.dev, maxRetries: 0 });
  try {
    if (s.entitiesUrl) {
      const me = await remote.whoami().catch((err) => {
        // A server without the extension still says whether it takes the key.
        if (err instanceof NotFoundError) return remote.listEntities().then(() => undefined);
        throw err;
      });
      status.account = me?.account ?? null;
      status.scopes = me?.scopes ?? null;
    } else await remote.checkUniverseAccess();
    status.signedIn = status.reachable = true;
  } catch (err) {
    // A key without a route's scope is still a key the server took.
    if (err instanceof ForbiddenError) status.signedIn = status.reachable = true;
    else {
      status.reachable = err instanceof AuthError;
      status.error = err instanceof Error ? err.message : String(err);
      ctx.exitCode = err instanceof MgptError ? exitCodeOf(err) : 1;
    }
  }
}

function print(ctx: CliContext, st: AuthStatus): void {
  const c = colors(ctx);
  const w = (line: string) => ctx.io.stdout.write(safe(line) + '\n');
  if (st.backend === 'local' || !st.key) {
    w(`not signed in to a server (profile ${st.profile}): commands use the local backend`);
    if (st.backend === 'remote') w('the remote backend is selected but has no key or URL: mgpt login --base-url URL --entities-url URL/v1 --key KEY');
    return;
  }
  const where = [st.entitiesUrl, st.baseUrl].filter(Boolean).join(' and ');
  const who = st.account ? ` as account ${st.account}` : '';
  if (st.signedIn) w(`${c.green('✓')} signed in to ${where}${who} (profile ${st.profile}, key ${st.key})`);
  else w(`${c.red('X')} ${st.reachable ? 'the server refused the key' : 'the server does not answer'}: ${where} (profile ${st.profile}, key ${st.key})`);
  if (st.scopes) w(`  scopes: ${st.scopes.join(', ')}`);
  if (st.error) w(`  ${st.error}`);
}
