import type { Command } from 'commander';
import type { UpdateEntityInput } from '../../../core/wire/entity-types.js';
import { BadRequestError } from '../../../core/errors.js';
import type { CliContext } from '../../context.js';
import { resolveEntity } from '../../entity-ref.js';
import { examples } from '../../help.js';
import { integerOption, readTextInput, recallOption } from '../../input.js';
import { formatInt, printJson, sanitizeForTerminal as safe } from '../../output.js';

export interface UpdateOptions {
  name?: string;
  instructions?: string;
  file?: string;
  budget?: string;
  cap?: string;
  recall?: string | boolean;
  recallTokens?: string;
  memoryTool?: boolean;
  json?: boolean;
}

const LABELS: Record<keyof UpdateEntityInput, string> = {
  name: 'name', instructions: 'instructions', budget_tokens: 'budget', cap_tokens: 'transcript cap', recall: 'recall', recall_tokens: 'recall tokens', memory_tool: 'memory tool',
};

export function registerUpdate(entities: Command, ctx: CliContext): void {
  examples(
    entities
      .command('update')
      .alias('edit')
      .description('change an entity\'s name, instructions, window budget, transcript cap, recall or memory tool (the model stays); a smaller budget rotates the window on the next turn')
      .argument('<entity>')
      .option('--name <name>', 'new display name, up to 200 characters ("" clears it)')
      .option('--instructions <text>', 'new standing system prompt (- for stdin)')
      .option('-f, --file <file>', 'read the new instructions from a file (- for stdin)')
      .option('--budget <tokens>', 'new window budget in tokens')
      .option('--cap <tokens>', 'new transcript cap in tokens: above what it holds, up to the engine\'s engine.maxTranscriptCap (a read-only entity is writable again)')
      .option('--recall [mode]', 'recall mode: auto (recall before each turn), tool (a recall tool the model may call; a bare --recall) or off')
      .option('--no-recall', 'recall off')
      .option('--recall-tokens <tokens>', 'the most recalled lines one turn adds to the prompt, 1 to half the budget (default: the smaller of engine.recallTokens and half the budget)')
      .option('--memory-tool', 'every turn offers the model remember({label, text}), which sets a pinned memory block')
      .option('--no-memory-tool', 'turns offer remember only when a send asks (--memory-tool on send or chat)')
      .option('--json', 'print the updated entity as JSON'),
    [
      'mgpt entities update ada --name "Ada Lovelace"',
      'mgpt entities update ada -f persona.md',
      'mgpt entities update ada --budget 8000 --json',
      'mgpt entities update ada --recall auto',
      'mgpt entities update history --cap 3000000',
      'mgpt entities update ada --recall-tokens 300',
      'mgpt entities update ada --memory-tool',
    ],
  ).action((ref: string, o: UpdateOptions) => runUpdate(ctx, ref, o));
}

export async function runUpdate(ctx: CliContext, ref: string, o: UpdateOptions): Promise<void> {
  if (o.name === undefined && o.instructions === undefined && o.file === undefined && o.budget === undefined && o.cap === undefined && o.recall === undefined && o.recallTokens === undefined && o.memoryTool === undefined) {
    throw new BadRequestError('nothing to update', { hint: 'give --name, --instructions (or -f FILE), --budget, --cap, --recall [auto|tool|off]/--no-recall, --recall-tokens N or --memory-tool/--no-memory-tool' });
  }
  const update: UpdateEntityInput = {
    name: o.name, budget_tokens: integerOption('--budget', o.budget), cap_tokens: integerOption('--cap', o.cap), recall: recallOption(o.recall), recall_tokens: integerOption('--recall-tokens', o.recallTokens), memory_tool: o.memoryTool,
  };
  if (o.instructions !== undefined || o.file !== undefined) {
    update.instructions = await readTextInput(ctx, 'instructions', o.instructions, o.file);
  }
  const before = await resolveEntity(ctx, ref);
  const entity = await (await ctx.backend()).updateEntity(before.id, update);
  if (o.json) return printJson(ctx.io, entity);
  ctx.io.stdout.write(entity.id + '\n');
  if (!ctx.io.stderrIsTTY) return;
  const changed = (Object.keys(LABELS) as Array<keyof UpdateEntityInput>).filter((k) => update[k] !== undefined).map((k) => LABELS[k]);
  ctx.io.stderr.write(`updated ${changed.join(', ')} of entity ${entity.name ? JSON.stringify(safe(entity.name)) + ' ' : ''}${entity.id}\n`);
  const tokens = entity.window.tokens ?? 0;
  if (tokens > entity.window.budget_tokens) {
    ctx.io.stderr.write(
      `the window holds ${formatInt(tokens)} tokens, over the new budget of ${formatInt(entity.window.budget_tokens)}: the next turn rotates it\n`,
    );
  }
}

