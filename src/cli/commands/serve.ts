import type { Command } from 'commander';
import { BadRequestError, MgptError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { durationOption, intOption } from '../input.js';

/** How long turns in flight may run on after SIGTERM (or SIGINT, SIGHUP) before their connections are cut. */
export const SERVE_DRAIN_MS = 30_000;

export interface ServeOptions {
  host: string;
  port: string;
  bodyLimit: string;
  headersTimeout: string;
  requestTimeout: string;
  keepAliveTimeout: string;
  maxConnections: string;
  poolSize?: string;
  strictSystem?: boolean;
  sidePattern: string[];
}

export function registerServe(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('serve')
      .description('serve the embedded engine over HTTP: /api/mgpt/* (and /backend-api/mgpt/*) and /v1/entities*')
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <port>', 'port (0 picks a free one)', '8080')
      .option('--body-limit <bytes>', 'largest request body (413 above)', String(1024 * 1024))
      .option('--headers-timeout <duration>', 'longest wait for a request\'s headers (408 and close after)', '10s')
      .option('--request-timeout <duration>', 'longest wait for a whole request, body included (408 and close after); streamed replies are not bound by it', '60s')
      .option('--keep-alive-timeout <duration>', 'how long an idle keep-alive connection stays open', '5s')
      .option('--max-connections <n>', 'open connections at most; more are closed on arrival', '1000')
      .option('--pool-size <n>', 'PostgreSQL: database connections at most (env MGPT_POOL_SIZE; default 10)')
      .option('--strict-system', 'OpenAI facade: refuse a client system message that differs from the entity\'s instructions (400) instead of applying it to the request')
      .option('--side-pattern <regex>', 'OpenAI facade: a request to an entity whose last user message matches is a side request (answered, not stored); repeatable', collect, []),
    [
      'mgpt serve',
      'mgpt serve --port 9000 --db /srv/mgpt/mgpt.db',
      'mgpt serve --request-timeout 2m --max-connections 200',
      'mgpt serve --db postgres://mgpt:secret@db.internal:5432/mgpt --pool-size 20',
      "mgpt serve --side-pattern '^Summarize this chat' --side-pattern '^Suggest a title'",
      'mgpt keys create --account local --scopes mgpt.responses:create,mgpt.images:create,mgpt.logs:read',
    ],
  ).action((o: ServeOptions) => runServe(ctx, o));
}

export async function runServe(ctx: CliContext, o: ServeOptions): Promise<void> {
  const port = intOption('--port', o.port, 0, 65535)!;
  const bodyLimit = intOption('--body-limit', o.bodyLimit, 1)!;
  const requestTimeoutMs = durationOption('--request-timeout', o.requestTimeout)!;
  const headersTimeoutMs = durationOption('--headers-timeout', o.headersTimeout)!;
  if (headersTimeoutMs > requestTimeoutMs) throw new BadRequestError('--headers-timeout must not be longer than --request-timeout');
  const keepAliveTimeoutMs = durationOption('--keep-alive-timeout', o.keepAliveTimeout)!;
  const maxConnections = intOption('--max-connections', o.maxConnections, 1)!;
  const poolSize = intOption('--pool-size', o.poolSize, 1);
  const chatPolicy = { strictSystem: o.strictSystem === true, sidePatterns: o.sidePattern.map(sidePattern) };
  // The server framework is loaded only by this command.
  const { listen } = await import('../../server/listen.js');
  const { describeDb } = await import('../../store/open.js');
  const settings = ctx.engineOptions();
  // PostgreSQL is connected and migrated before the port opens: a replica that cannot reach it never listens.
  const server = await listen({ ...settings, poolSize: poolSize ?? settings.poolSize }, o.host, port, {
    bodyLimit,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs,
    maxConnections,
    chatPolicy,
    onUnexpectedError: (err) => ctx.io.stderr.write(`mgpt serve: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
  }).catch((err: unknown) => Promise.reject(listenError(err, o.host, port)));
  ctx.io.stderr.write(`mgpt serve: listening on ${server.url} (db ${describeDb(settings.db)})\n`);
  ctx.io.stdout.write(server.url + '\n');
  ctx.extendGrace(SERVE_DRAIN_MS + 2000);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // Stop accepting; turns in flight finish (up to the bound), then the database (file or pool) closes.
  ctx.io.stderr.write('mgpt serve: stopping; letting turns in flight finish\n');
  await server.close(SERVE_DRAIN_MS);
  ctx.io.stderr.write('mgpt serve: stopped\n');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function sidePattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new BadRequestError(`--side-pattern ${JSON.stringify(source)} is not a regular expression: ${(err as Error).message}`, { hint: "for example --side-pattern '^### Task:'" });
  }
}

/** The socket's refusal in words a person can act on. */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE') return new MgptError(`port ${port} on ${host} is in use`, { hint: '--port 0 picks a free one (the URL is printed on stdout)' });
  if (code === 'EADDRNOTAVAIL') return new BadRequestError(`cannot listen on ${host}: no such address on this machine`, { hint: 'use 127.0.0.1, 0.0.0.0 or one of this machine\'s addresses' });
  if (code === 'EACCES') return new MgptError(`not allowed to listen on port ${port}`, { hint: 'ports below 1024 need privileges: pick a higher one' });
  return err;
}
