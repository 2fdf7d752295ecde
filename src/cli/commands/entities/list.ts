import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { formatInt, printJson, printTable } from '../../output.js';

export function registerList(entities: Command, ctx: CliContext): void {
  examples(
    entities.command('list').alias('ls').description('list entities, most recently active first (at most 200)').option('--json', 'JSON output'),
    ['mgpt entities list', "mgpt entities list --json | jq -r '.data[].id'"],
  ).action((o: { json?: boolean }) => runList(ctx, o));
}

export async function runList(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const list = await (await ctx.backend()).listEntities();
  if (o.json) return printJson(ctx.io, list);
  if (list.data.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.io.stderr.write('no entities yet: create one with `mgpt entities create --name NAME`\n');
    return;
  }
  printTable(
    ctx,
    [
      { header: 'ID', value: (e) => e.id },
      { header: 'NAME', value: (e) => e.name, max: 30 },
      { header: 'MESSAGES', value: (e) => formatInt(e.transcript.messages), right: true },
      { header: 'TOKENS', value: (e) => formatInt(e.transcript.tokens), right: true },
      { header: 'STATE', value: (e) => (e.read_only ? 'read-only' : 'active') },
      { header: 'UPDATED', value: (e) => e.updated_at },
    ],
    list.data,
  );
}
