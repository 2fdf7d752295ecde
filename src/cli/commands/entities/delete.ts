import { createInterface } from 'node:readline/promises';
import { plural } from '../../../core/text/numbers.js';
import type { Command } from 'commander';
import { BadRequestError, CancelledError } from '../../../core/errors.js';
import { entityLabel } from '../../../core/ref.js';
import type { Entity } from '../../../core/wire/entity-types.js';
import type { CliContext } from '../../context.js';
import { resolveEntity } from '../../entity-ref.js';
import { examples } from '../../help.js';
import { printJson, sanitizeForTerminal as safe } from '../../output.js';

export function registerDelete(entities: Command, ctx: CliContext): void {
  examples(
    entities
      .command('delete')
      .alias('rm')
      .description('delete an entity for good: transcript, window and state (asks first on a terminal; needs --yes otherwise)')
      .argument('<entity>')
      .option('-y, --yes', 'do not ask for confirmation')
      .option('--json', 'JSON output'),
    ['mgpt entities delete ada', 'mgpt entities delete 0b7c... --yes --json'],
  ).action((ref: string, o: { yes?: boolean; json?: boolean }) => runDelete(ctx, ref, o));
}

export async function runDelete(ctx: CliContext, ref: string, o: { yes?: boolean; json?: boolean }): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  if (!o.yes) await confirm(ctx, entity, ref);
  const deleted = await (await ctx.backend()).deleteEntity(entity.id);
  if (o.json) return printJson(ctx.io, deleted);
  ctx.io.stderr.write(`deleted entity ${entity.id}\n`);
}

/** Asks on a terminal; with nobody to ask (a script, a pipe), deleting needs --yes, as with gh. */
async function confirm(ctx: CliContext, entity: Entity, ref: string): Promise<void> {
  if (!ctx.io.stdinIsTTY || !ctx.io.stderrIsTTY) {
    // Named as the user typed it (a name, a prefix or the id); the id goes with the error.
    const typed = entityLabel({ id: ref, name: ref });
    throw new BadRequestError(`not deleting ${typed} without confirmation: this is not an interactive terminal`, {
      hint: `pass --yes to delete it: mgpt entities delete ${typed} --yes`, entityId: entity.id,
    });
  }
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr as NodeJS.WritableStream });
  const answer = await rl.question(
    `Delete entity ${entity.name ? JSON.stringify(safe(entity.name)) + ' ' : ''}${entity.id} and its ${plural(entity.transcript.messages, 'message')}? This cannot be undone. [y/N] `,
  );
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new CancelledError('not deleted');
}
