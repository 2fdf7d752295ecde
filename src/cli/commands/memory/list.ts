import { BadRequestError } from '../../../core/errors.js';
import type { MemoryList } from '../../../core/wire/memory.js';
import type { CliContext } from '../../context.js';
import { resolveEntity } from '../../entity-ref.js';
import { colors, formatInt, gauge, printJson, printTable } from '../../output.js';

/** `mgpt memory ENTITY`: the blocks, with what they take of the limits. */
export async function runList(ctx: CliContext, ref: string | undefined, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, needEntity(ref));
  const list = await (await ctx.backend()).listMemory(entity.id);
  if (o.json) return printJson(ctx.io, list);
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(colors(ctx).bold(memoryLine(list)) + '\n\n');
  if (!list.memory.length) {
    if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(`no pinned memory yet; add a block with: mgpt memory set ${ref} LABEL TEXT\n`);
    return;
  }
  printTable(
    ctx,
    [
      { header: 'LABEL', value: (b) => b.label, keep: true },
      { header: 'TOKENS', value: (b) => formatInt(b.tokens), right: true },
      { header: 'UPDATED', value: (b) => b.updated_at, time: true },
      { header: 'TEXT', value: (b) => b.text },
    ],
    list.memory,
  );
}

/** `pinned memory 40 / 2,000 tokens [gauge] 2 / 16 blocks` */
export function memoryLine(list: MemoryList): string {
  const { tokens, limits } = list;
  return `pinned memory ${formatInt(tokens)} / ${formatInt(limits.tokens)} tokens ${gauge(tokens, limits.tokens, 12)}  ${list.memory.length} / ${limits.blocks} blocks`;
}

/** `mgpt memory ENTITY --history`: every change, oldest first. */
export async function runHistory(ctx: CliContext, ref: string | undefined, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, needEntity(ref));
  const h = await (await ctx.backend()).memoryHistory(entity.id);
  if (o.json) return printJson(ctx.io, h);
  if (!h.history.length && ctx.io.stdoutIsTTY) return void ctx.io.stdout.write('no changes to pinned memory yet\n');
  const text = (t: string | null, none: string) => (t === null ? none : t);
  printTable(
    ctx,
    [
      { header: 'WHEN', value: (c) => c.created_at, time: true },
      { header: 'SOURCE', value: (c) => c.source, keep: true },
      { header: 'LABEL', value: (c) => c.label, keep: true },
      { header: 'BEFORE', value: (c) => text(c.before, '(new)'), max: 40 },
      { header: 'AFTER', value: (c) => text(c.after, '(removed)') },
    ],
    h.history,
  );
}

function needEntity(ref: string | undefined): string {
  if (ref === undefined) throw new BadRequestError('no entity given', { hint: 'mgpt memory ENTITY, or mgpt memory set|edit|rm ENTITY LABEL (see mgpt memory --help)' });
  return ref;
}
