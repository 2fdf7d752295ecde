import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { colors, formatInt, limitNote, printJson, printTable, windowLine } from '../output.js';

export function registerWindow(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('window')
      .description('show exactly what the model sees next turn: summary and message blocks, and the budget')
      .argument('<entity>', 'entity id or exact name')
      .option('--json', 'JSON output (the entity.window object)'),
    ['mgpt window ada', "mgpt window ada --json | jq '.blocks[] | select(.kind==\"summary\")'"],
  ).action((ref: string, o: { json?: boolean }) => runWindow(ctx, ref, o));
}

export async function runWindow(ctx: CliContext, ref: string, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  const w = await (await ctx.backend()).getWindow(entity.id);
  if (o.json) return printJson(ctx.io, w);
  const c = colors(ctx);
  const summaries = w.blocks.filter((b) => b.kind === 'summary').length;
  const head =
    `window ${windowLine(w.tokens, w)}  ${w.blocks.length} blocks (${summaries} summary)${limitNote(w)}`;
  // The gauge is for people; piped output is just the blocks, one per line.
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(c.bold(head) + '\n\n');
  printTable(
    ctx,
    [
      { header: 'KIND', value: (b) => b.kind },
      { header: 'COVERS', value: (b) => (b.covers[0] === b.covers[1] ? `${b.covers[0]}` : `${b.covers[0]}-${b.covers[1]}`) },
      { header: 'TOKENS', value: (b) => formatInt(b.tokens), right: true },
      { header: 'ROLE', value: (b) => b.role },
      { header: 'CONTENT', value: (b) => b.content, max: 60 },
    ],
    w.blocks,
  );
}
