import { Option, type Command } from 'commander';
import { formatCount, formatUsd } from '../../core/text/numbers.js';
import { USAGE_GROUPS, type UsageLine, type UsageReport } from '../../core/wire/usage.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson, printTable } from '../output.js';

interface UsageOptions {
  by?: string;
  since?: string;
  json?: boolean;
}

export function registerUsage(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('usage')
      .description("what the account was billed, summed from its ledger (every turn, completion and universe reply)")
      .addOption(new Option('--by <group>', 'sum by day (UTC), model, entity or API key (local: charges made without a key, by the local backend)').choices([...USAGE_GROUPS]).default('day'))
      .option('--since <date>', 'count charges from this date or ISO 8601 time on (default: all)')
      .option('--json', 'JSON output ({ by, since, data: [{ key, name?, charges, input_tokens, output_tokens, cost_usd }], charges, input_tokens, output_tokens, cost_usd })'),
    ['mgpt usage', 'mgpt usage --by entity --since 2026-11-01', 'mgpt usage --by model --json', 'mgpt usage --by key'],
  ).action((o: UsageOptions) => runUsage(ctx, o));
}

/** What a by-key line reads for the charges no API key made: the local backend's own use. */
const LOCAL = 'local';

export async function runUsage(ctx: CliContext, o: UsageOptions): Promise<void> {
  const report = await (await ctx.backend()).usage({ by: o.by, since: o.since });
  if (o.json) return printJson(ctx.io, report);
  printTable(ctx, columns(report), report.data);
  if (ctx.io.stdoutIsTTY) ctx.io.stderr.write(`total ${formatUsd(report.cost_usd)}: ${formatCount(report.charges)} ${report.charges === 1 ? 'charge' : 'charges'}, ${formatCount(report.input_tokens)} in + ${formatCount(report.output_tokens)} out tokens\n`);
}

function columns(report: UsageReport): Parameters<typeof printTable<UsageLine>>[1] {
  const head = report.by === 'entity'
    ? [{ header: 'ENTITY', value: (l: UsageLine) => l.key ?? '-', id: true }, { header: 'NAME', value: (l: UsageLine) => l.name ?? '-' }]
    : [{ header: report.by.toUpperCase(), value: (l: UsageLine) => l.key ?? (report.by === 'key' ? LOCAL : '-') }];
  return [
    ...head,
    { header: 'CHARGES', value: (l) => formatCount(l.charges), right: true },
    { header: 'INPUT', value: (l) => formatCount(l.input_tokens), right: true },
    { header: 'OUTPUT', value: (l) => formatCount(l.output_tokens), right: true },
    { header: 'COST', value: (l) => formatUsd(l.cost_usd), right: true },
  ];
}
