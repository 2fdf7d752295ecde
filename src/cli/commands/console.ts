import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { durationOption } from '../input.js';

/**
 * `mgpt console`: `mgpt serve` on a free loopback port for one person, with a key made for this
 * session (revoked when it stops) and the browser opened on the console. The key never appears in
 * a URL: the address carries a one-time code in its fragment (never sent in a request line, so
 * never in a server's log), which the page exchanges once for the key by POST.
 */
export function registerConsole(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('console')
      .description('open the web console on the embedded engine (a local server on a free loopback port, a key for this session)')
      .option('--no-open', 'do not open a browser; only print the address (as on a machine without a display)')
      .option('--key-lifetime <duration>', "how long the session's key works after the console stops renewing it (killed, crashed); at least 1s", '5m'),
    ['mgpt console', 'mgpt console --no-open', 'mgpt console --db ~/team.db'],
  ).action((o: { open: boolean; keyLifetime: string }) => runConsole(ctx, o));
}

async function runConsole(ctx: CliContext, o: { open: boolean; keyLifetime: string }): Promise<void> {
  const consoleKeyLifetimeMs = durationOption('--key-lifetime', o.keyLifetime, 1000);
  const { listen } = await import('../../server/listen.js');
  const server = await listen(ctx.engineOptions(), '127.0.0.1', 0, { consoleSession: true, consoleKeyLifetimeMs, metricsEndpoint: false });
  const url = server.consoleUrl!;
  const opened = o.open && hasDisplay(ctx.env) ? openBrowser(url) : false;
  ctx.io.stderr.write(`mgpt console: ${opened ? 'opened' : 'open'} this address in a browser (its sign-in code works once; Ctrl-C stops the console and revokes its key):\n`);
  ctx.io.stdout.write(url + '\n');
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close(2000);
}

/** A graphical session to open a browser in: always on macOS and Windows; on others, an X or Wayland display. */
function hasDisplay(env: Record<string, string | undefined>): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** The system's opener, detached; false when it cannot be started (the address is printed either way). */
function openBrowser(url: string): boolean {
  const [cmd, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]] : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
