import { NotFoundError } from '../../../core/errors.js';
import type { MemoryBlock } from '../../../core/wire/memory.js';
import type { CliContext } from '../../context.js';
import { editText } from '../../editor.js';
import { resolveEntity } from '../../entity-ref.js';
import { readTextInput } from '../../input.js';
import { formatInt, note, printJson, sanitizeForTerminal as safe } from '../../output.js';

/** `mgpt memory set ENTITY LABEL TEXT|-|-f FILE`. */
export async function runSet(ctx: CliContext, ref: string, label: string, text: string | undefined, o: { file?: string; json?: boolean }): Promise<void> {
  const value = await readTextInput(ctx, 'text', text, o.file);
  const entity = await resolveEntity(ctx, ref);
  const block = await (await ctx.backend()).setMemory(entity.id, label, value);
  printSet(ctx, block, o);
}

/** `mgpt memory edit ENTITY LABEL`: the block in $EDITOR; a new block starts empty. */
export async function runEdit(ctx: CliContext, ref: string, label: string, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  const backend = await ctx.backend();
  const before = await backend.getMemory(entity.id, label).catch((err: unknown) => {
    if (err instanceof NotFoundError && err.code === 'no_memory_block') return undefined;
    throw err;
  });
  const edited = editText(ctx, before?.text ?? '', `${label}.txt`).replace(/\r?\n$/, '');
  if (before && edited === before.text) {
    if (o.json) return printJson(ctx.io, before);
    return note(ctx, `block ${label} unchanged`);
  }
  printSet(ctx, await backend.setMemory(entity.id, label, edited), o);
}

/** `mgpt memory rm ENTITY LABEL`. */
export async function runRm(ctx: CliContext, ref: string, label: string, o: { json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  await (await ctx.backend()).deleteMemory(entity.id, label);
  if (o.json) return printJson(ctx.io, { entity_id: entity.id, label, deleted: true });
  ctx.io.stderr.write(`removed block ${safe(label)} from ${entity.id}'s pinned memory\n`);
}

function printSet(ctx: CliContext, block: MemoryBlock, o: { json?: boolean }): void {
  if (o.json) return printJson(ctx.io, block);
  ctx.io.stderr.write(`set block ${safe(block.label)} (${formatInt(block.tokens)} tokens); the model sees it from the next turn on\n`);
}
