import type { Command } from 'commander';
import type { WindowBlock } from '../../core/wire/entity-types.js';
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
      .option('--at <seq|date>', 'the window the model saw when it answered the message at this seq (or the last turn stored by this date)')
      .option('--json', 'JSON output (the entity.window object; with --at, also the prompt as it was sent)'),
    [
      'mgpt window ada',
      "mgpt window ada --json | jq '.blocks[] | select(.kind==\"summary\")'",
      'mgpt window ada --at 41',
      "mgpt window ada --at 2026-11-26T10:00:00Z --json | jq '.prompt'",
    ],
  ).action((ref: string, o: { json?: boolean; at?: string }) => runWindow(ctx, ref, o));
}

export async function runWindow(ctx: CliContext, ref: string, o: { json?: boolean; at?: string }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  if (o.at !== undefined) return windowAt(ctx, entity.id, o.at, o.json);
  const w = await (await ctx.backend()).getWindow(entity.id);
  if (o.json) return printJson(ctx.io, w);
  const c = colors(ctx);
  const summaries = w.blocks.filter((b) => b.kind === 'summary').length;
  const head =
    `window ${windowLine(w.tokens, w)}  ${w.blocks.length} blocks (${summaries} summary)${limitNote(w)}`;
  // The gauge is for people; piped output is just the blocks, one per line.
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(c.bold(head) + '\n\n');
  printBlocks(ctx, w.blocks);
}

/** `--at`: the window a past turn was answered from; its whole prompt with --json. */
async function windowAt(ctx: CliContext, id: string, at: string, json?: boolean): Promise<void> {
  const w = await (await ctx.backend()).getWindowAt(id, at);
  if (json) return printJson(ctx.io, w);
  const head = `window at seq ${w.seq}: ${w.blocks.length} blocks, ${formatInt(w.tokens)} tokens; the prompt was ${w.prompt.length} messages (--json shows them)`;
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(colors(ctx).bold(head) + '\n\n');
  printBlocks(ctx, w.blocks);
}

function printBlocks(ctx: CliContext, blocks: WindowBlock[]): void {
  printTable(
    ctx,
    [
      { header: 'KIND', value: (b) => b.kind },
      { header: 'COVERS', value: (b) => (b.covers[0] === b.covers[1] ? `${b.covers[0]}` : `${b.covers[0]}-${b.covers[1]}`) },
      { header: 'TOKENS', value: (b) => formatInt(b.tokens), right: true },
      { header: 'ROLE', value: (b) => b.role },
      { header: 'CONTENT', value: (b) => b.content, max: 60 },
    ],
    blocks,
  );
}
