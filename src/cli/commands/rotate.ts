import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import type { RotateInput } from '../../core/wire/rotation-types.js';
import { rotateSaid } from '../../ui/chat-steer.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { printJson } from '../output.js';

export interface RotateOptions {
  undo?: boolean;
  resummarize?: boolean;
  model?: string;
  json?: boolean;
}

export function registerRotate(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('rotate')
      .description("steer an entity's window: fold now down to the rotation target, undo the last rotation, or write the newest summary again")
      .argument('<entity>', 'entity id or exact name')
      .option('--undo', 'bring back the window from before the last rotation (the record stays, marked undone)')
      .option('--resummarize', 'write the newest summary again from the span it folded; only its text changes')
      .option('--model <name>', 'with --resummarize: the provider model that writes it (on the entity\'s route)')
      .option('--json', 'JSON output (the rotation record and the window after)'),
    ['mgpt rotate ada', 'mgpt rotate ada --undo', 'mgpt rotate ada --resummarize --model gpt-4o', 'mgpt rotations ada'],
  ).action((ref: string, o: RotateOptions) => runRotate(ctx, ref, o));
}

export async function runRotate(ctx: CliContext, ref: string, o: RotateOptions): Promise<void> {
  const input = rotateInput(o);
  const entity = await resolveEntity(ctx, ref);
  const result = await (await ctx.backend()).rotate(entity.id, input, { signal: ctx.signal });
  if (o.json) return printJson(ctx.io, result);
  ctx.io.stdout.write(rotateSaid(result) + '\n');
}

/** The flags as one action; contradictory ones are a usage error (exit 2) before anything is asked. */
function rotateInput(o: RotateOptions): RotateInput {
  if (o.undo && o.resummarize) throw new BadRequestError('--undo and --resummarize are two actions; give one');
  if (o.model !== undefined && !o.resummarize) throw new BadRequestError('--model is for --resummarize', { hint: 'mgpt rotate ENTITY --resummarize --model NAME' });
  if (o.undo) return { action: 'undo' };
  if (o.resummarize) return { action: 'resummarize', ...(o.model === undefined ? {} : { model: o.model }) };
  return { action: 'rotate' };
}

