import { Option, type Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import { LOG_PAGE_SIZE_MAX } from '../../core/wire/universe-types.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { intOption } from '../input.js';
import { colors, printJson, printTable } from '../output.js';

interface LogsOptions {
  kind?: string;
  game?: string;
  user?: string;
  requestId?: string;
  page?: string;
  limit?: string;
  pageSize?: string;
  json?: boolean;
}

export function registerLogs(program: Command, ctx: CliContext): void {
  const logs = examples(
    program
      .command('logs')
      .description('generation logs (one per text or image generation), newest first')
      .option('--kind <kind>', 'text or image')
      .option('--game <id>', 'hosted game id')
      .option('--user <id>', 'acting user')
      .option('--request-id <id>', 'caller correlation id')
      .option('--page <n>', 'page, from 1', '1')
      .option('--limit <n>', `records per page, 1-${LOG_PAGE_SIZE_MAX} (default: 20)`)
      // The old name stays as a hidden alias: every other listing command says --limit.
      .addOption(new Option('--page-size <n>', 'the old name of --limit').hideHelp())
      .option('--json', 'JSON output ({ data, page, pageSize, total, hasMore })'),
    ['mgpt logs --kind image --limit 5', 'mgpt logs --request-id turn-7 --json', 'mgpt logs show 1b2c...'],
  ).action((o: LogsOptions) => runLogs(ctx, o));
  // `logs` has its own --json; commander hands a trailing --json to it, so `show` reads both.
  examples(logs.command('show').description('one log record in detail (request and response summaries)').argument('<id>', 'a log id or a unique prefix of 4+ characters').option('--json', 'JSON output'), [
    'mgpt logs show 1b2c... --json',
  ]).action((id: string, o: { json?: boolean }, cmd: Command) => runLogShow(ctx, id, { json: o.json || cmd.parent?.opts().json }));
}

export async function runLogs(ctx: CliContext, o: LogsOptions): Promise<void> {
  const list = await (await ctx.backend()).listLogs({
    kind: o.kind,
    game: o.game,
    user: o.user,
    requestId: o.requestId,
    page: intOption('--page', o.page, 1),
    pageSize: pageSize(o),
  });
  if (o.json) return printJson(ctx.io, list);
  printTable(
    ctx,
    [
      { header: 'ID', value: (l) => l.id, id: true },
      { header: 'KIND', value: (l) => (l.facade ? `${l.kind}/${l.facade}` : l.kind) },
      { header: 'MODEL', value: (l) => l.model },
      { header: 'STATUS', value: (l) => l.status },
      { header: 'TOKENS', value: (l) => `${l.inputTokens}+${l.outputTokens}`, right: true },
      { header: 'CACHED', value: (l) => (l.cachedInputTokens === undefined ? '-' : String(l.cachedInputTokens)), right: true },
      { header: 'MS', value: (l) => String(l.totalMs), right: true },
      { header: 'REQUEST', value: (l) => l.requestId ?? '-' },
      { header: 'CREATED', value: (l) => l.createdAt, time: true },
    ],
    list.data,
  );
  if (list.hasMore && ctx.io.stdoutIsTTY) ctx.io.stderr.write(`page ${list.page} of ${Math.ceil(list.total / list.pageSize)}: --page ${list.page + 1} for more\n`);
}

/** --limit, or its old name --page-size; both at once must agree. */
function pageSize(o: LogsOptions): number {
  if (o.limit !== undefined && o.pageSize !== undefined && o.limit !== o.pageSize) {
    throw new BadRequestError('--limit and --page-size are the same option; give one');
  }
  const flag = o.limit !== undefined ? '--limit' : '--page-size';
  return intOption(flag, o.limit ?? o.pageSize ?? '20', 1, LOG_PAGE_SIZE_MAX) ?? 20;
}

export async function runLogShow(ctx: CliContext, id: string, o: { json?: boolean }): Promise<void> {
  const d = await (await ctx.backend()).getLog(id);
  if (o.json) return printJson(ctx.io, d);
  const c = colors(ctx);
  const { request, response, ...record } = d;
  for (const [k, v] of Object.entries(record)) ctx.io.stdout.write(`${c.bold(k.padEnd(14))}${v === null ? '-' : String(v)}\n`);
  ctx.io.stdout.write(`${c.bold('request'.padEnd(14))}${JSON.stringify(request)}\n${c.bold('response'.padEnd(14))}${JSON.stringify(response)}\n`);
}
