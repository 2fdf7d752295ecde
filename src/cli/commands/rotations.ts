import type { Command } from 'commander';
import type { RotationRecord } from '../../core/wire/rotation-types.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { formatInt, printJson, printTable } from '../output.js';

export function registerRotations(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('rotations')
      .description("list an entity's rotations: when, why, the span folded, the summary, the model and its usage, undone or not")
      .argument('<entity>', 'entity id or exact name')
      .option('--json', 'JSON output (the rotations object, with each window before and after)'),
    ['mgpt rotations ada', "mgpt rotations ada --json | jq '.rotations[-1].summary.text'", 'mgpt rotate ada --undo'],
  ).action((ref: string, o: { json?: boolean }) => runRotations(ctx, ref, o));
}

export async function runRotations(ctx: CliContext, ref: string, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  const list = await (await ctx.backend()).listRotations(entity.id);
  if (o.json) return printJson(ctx.io, list);
  if (!list.rotations.length && ctx.io.stdoutIsTTY) {
    ctx.io.stderr.write(`no rotations yet: ${entity.name || entity.id}'s window has never been folded (fold now: mgpt rotate ${ref})\n`);
    return;
  }
  const rows = list.rotations.map((r, i) => ({ ...r, n: i + 1 }));
  printTable(
    ctx,
    [
      { header: '#', value: (r) => String(r.n), right: true },
      { header: 'WHEN', value: (r) => r.created_at, time: true },
      { header: 'TRIGGER', value: (r) => (r.seq === null ? r.trigger : `${r.trigger} #${r.seq}`) },
      { header: 'FOLDED', value: (r) => `${r.from_seq}-${r.to_seq}` },
      { header: 'SUMMARY', value: (r) => formatInt(r.summary.tokens), right: true },
      { header: 'ROUTE', value: (r) => `${r.route.provider}:${r.route.model}` },
      { header: 'USAGE', value: usage },
      { header: 'BLOCKS', value: (r) => `${r.blocks_before.length}→${r.blocks_after.length}` },
      { header: 'UNDONE', value: (r) => (r.undone ? 'undone' : '') },
      { header: 'TEXT', value: (r) => r.summary.text, max: 40 },
    ],
    rows,
  );
}

/** prompt (cached) → completion tokens, as the provider counted them. */
function usage(r: RotationRecord): string {
  const u = r.usage;
  const cached = u.cached_tokens === null ? '' : ` (${formatInt(u.cached_tokens)} cached)`;
  return `${formatInt(u.prompt_tokens)}${cached} → ${formatInt(u.completion_tokens)}`;
}
