import type { Command } from 'commander';
import type { RequestRecord } from '../../server/request-log.js';
import { BadRequestError, MgptError } from '../../core/errors.js';
import { logField } from '../../core/text/terminal-text.js';
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
  importMaxConversations?: string;
  poolSize?: string;
  strictSystem?: boolean;
  sidePattern: string[];
  logFormat?: string;
  metrics: boolean;
  console: boolean;
  mcp: boolean;
  mcpAllowSend?: boolean;
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
      .option('--import-max-conversations <n>', 'the most conversations one POST /v1/imports may hold (413 above; default: engine.importMaxConversations, 100000)')
      .option('--pool-size <n>', 'PostgreSQL: database connections at most (env MGPT_POOL_SIZE; default 10)')
      .option('--strict-system', 'OpenAI facade: refuse a client system message that differs from the entity\'s instructions (400) instead of applying it to the request')
      .option('--side-pattern <regex>', 'OpenAI facade: a request to an entity whose last user message matches is a side request (answered, not stored); repeatable', collect, [])
      .option('--no-metrics', 'do not serve GET /metrics (Prometheus text, no key needed)')
      .option('--no-console', 'do not serve the web console at / (docs/console.md)')
      .option('--no-mcp', 'do not serve MCP at /mcp (streamable HTTP, docs/mcp.md)')
      .option('--mcp-allow-send', "MCP: also offer send, a turn through the entity's own model (billed)")
      .option('--log-format <format>', 'one line per request on stderr: text, json (one object a line) or off (default: text on a terminal, else off)'),
    [
      'mgpt serve',
      'mgpt serve --port 9000 --db /srv/mgpt/mgpt.db',
      'mgpt serve --request-timeout 2m --max-connections 200',
      'mgpt serve --db postgres://mgpt:secret@db.internal:5432/mgpt --pool-size 20',
      'mgpt serve --log-format json 2>> requests.jsonl',
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
  const importMaxConversations = intOption('--import-max-conversations', o.importMaxConversations, 1);
  const chatPolicy = { strictSystem: o.strictSystem === true, sidePatterns: o.sidePattern.map(sidePattern) };
  const onRequest = requestLogWriter(ctx, o.logFormat);
  // The server framework is loaded only by this command.
  const { listen } = await import('../../server/listen.js');
  const { describeDb } = await import('../../store/open.js');
  const settings = ctx.engineOptions();
  // PostgreSQL is connected and migrated before the port opens: a replica that cannot reach it never listens.
  const engineOpts = { ...settings, poolSize: poolSize ?? settings.poolSize, importMaxConversations: importMaxConversations ?? settings.importMaxConversations };
  const server = await listen(engineOpts, o.host, port, {
    bodyLimit,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs,
    maxConnections,
    chatPolicy,
    onRequest,
    metricsEndpoint: o.metrics,
    console: o.console,
    onSpoolsSwept: (removed, dir) => ctx.io.stderr.write(`mgpt serve: removed ${removed} import spool${removed === 1 ? '' : 's'} left in ${dir} by a process that stopped\n`),
    mcp: o.mcp ? { allowSend: o.mcpAllowSend === true, version: ctx.version } : false,
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

/** Where `--log-format` sends each request's record: stderr, as a text line or one JSON object; nowhere when off. */
function requestLogWriter(ctx: CliContext, format: string | undefined): ((r: RequestRecord) => void) | undefined {
  const chosen = format ?? (ctx.io.stderrIsTTY ? 'text' : 'off');
  if (chosen === 'off') return undefined;
  if (chosen === 'json') return (r) => ctx.io.stderr.write(JSON.stringify(r) + '\n');
  if (chosen === 'text') return (r) => ctx.io.stderr.write(textRecord(r) + '\n');
  throw new BadRequestError(`--log-format must be text, json or off, got ${JSON.stringify(format)}`);
}

/**
 * `2026-11-25T16:30:00.000Z POST /v1/entities/:id/messages 200 12.3 ms key 1b2c… entity 0a1b… 812+48 tok req 4f…`;
 * what came from the request is escaped (logField): a path is the client's to choose, the terminal is not.
 */
function textRecord(r: RequestRecord): string {
  const parts = [r.time, logField(r.method), logField(r.route), String(r.status), `${r.durationMs} ms`];
  if (r.keyId) parts.push(`key ${logField(r.keyId)}`);
  if (r.accountId) parts.push(`account ${logField(r.accountId)}`);
  if (r.entityId) parts.push(`entity ${logField(r.entityId)}`);
  if (r.universeId) parts.push(`universe ${logField(r.universeId)}`);
  if (r.promptTokens !== undefined) parts.push(`${r.promptTokens}+${r.completionTokens} tok`);
  parts.push(`req ${logField(r.requestId)}`);
  return parts.join(' ');
}
