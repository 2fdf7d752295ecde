import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { intOption } from '../input.js';

export interface ServeOptions {
  host: string;
  port: string;
  bodyLimit: string;
}

export function registerServe(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('serve')
      .description('serve the embedded engine over HTTP: /api/mgpt/* (and /backend-api/mgpt/*) and /v1/entities*')
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <port>', 'port (0 picks a free one)', '8080')
      .option('--body-limit <bytes>', 'largest request body (413 above)', String(1024 * 1024)),
    [
      'mgpt serve',
      'mgpt serve --port 9000 --db /srv/mgpt/mgpt.db',
      'mgpt keys create --account local --scopes mgpt.responses:create,mgpt.images:create,mgpt.logs:read',
    ],
  ).action((o: ServeOptions) => runServe(ctx, o));
}

export async function runServe(ctx: CliContext, o: ServeOptions): Promise<void> {
  const port = intOption('--port', o.port, 0, 65535)!;
  const bodyLimit = intOption('--body-limit', o.bodyLimit, 1)!;
  // The server framework is loaded only by this command.
  const { listen } = await import('../../server/listen.js');
  const server = await listen(ctx.engineOptions(), o.host, port, {
    bodyLimit,
    onUnexpectedError: (err) => ctx.io.stderr.write(`mgpt serve: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
  });
  ctx.io.stderr.write(`mgpt serve: listening on ${server.url} (db ${ctx.settings().db})\n`);
  ctx.io.stdout.write(server.url + '\n');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', stop, { once: true });
    process.once('SIGTERM', stop);
  });
  await server.close();
  ctx.io.stderr.write('mgpt serve: stopped\n');
}
