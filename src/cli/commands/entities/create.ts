import type { Command } from 'commander';
import { type CreateEntityInput, ENTITY_MODEL } from '../../../core/wire/entity-types.js';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { integerOption, readTextInput, recallOption } from '../../input.js';
import { printJson, sanitizeForTerminal as safe } from '../../output.js';

export interface CreateOptions {
  name?: string;
  instructions?: string;
  file?: string;
  model: string;
  budget?: string;
  cap?: string;
  recall?: string | boolean;
  recallTokens?: string;
  memoryTool?: boolean;
  json?: boolean;
}

export function registerCreate(entities: Command, ctx: CliContext): void {
  examples(
    entities
      .command('create')
      .description('create an entity (prints its id)')
      .option('--name <name>', 'display name, up to 200 characters')
      .option('--instructions <text>', 'standing system prompt, never rotated out')
      .option('-f, --file <file>', 'read the instructions from a file (- for stdin)')
      .option('--model <id>', 'model id, fixed for the life of the entity', ENTITY_MODEL)
      .option('--budget <tokens>', "window budget in tokens (default: the engine's, engine.windowBudget)")
      .option('--cap <tokens>', "transcript cap in tokens, up to the engine's engine.maxTranscriptCap (default: engine.transcriptCap)")
      .option('--recall [mode]', 'recall what the window folded away: auto (recalled into the prompt before each turn), tool (the model may call a recall tool; needs a model that can call tools; a bare --recall) or off; a new entity recalls auto unless told')
      .option('--recall-tokens <tokens>', 'the most recalled lines one turn adds to the prompt, 1 to half the budget (default: the smaller of engine.recallTokens and half the budget)')
      .option('--memory-tool', 'every turn offers the model remember({label, text}), which sets a pinned memory block (a send can say otherwise for itself: --no-memory-tool)')
      .option('--json', 'print the created entity as JSON'),
    [
      'mgpt entities create --name ada --instructions "You are Ada, a patient maths tutor."',
      'ENT=$(mgpt entities create --name ada -f persona.md)',
      'mgpt entities create --name ada --recall',
      'mgpt entities create --name ada --recall off',
      'mgpt entities create --name ada --recall auto --recall-tokens 400',
      'mgpt entities create --name ada --budget 8000 --memory-tool',
    ],
  ).action((o: CreateOptions) => runCreate(ctx, o));
}

/** The settings given, in the wire's names; those not given are left to the engine's defaults. */
function settingsOf(o: CreateOptions): Omit<CreateEntityInput, 'model' | 'name' | 'instructions'> {
  const settings = {
    budget_tokens: integerOption('--budget', o.budget),
    cap_tokens: integerOption('--cap', o.cap),
    recall: recallOption(o.recall),
    recall_tokens: integerOption('--recall-tokens', o.recallTokens),
    memory_tool: o.memoryTool,
  };
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
}

export async function runCreate(ctx: CliContext, o: CreateOptions): Promise<void> {
  const instructions =
    o.instructions === undefined && o.file === undefined ? '' : await readTextInput(ctx, 'instructions', o.instructions, o.file);
  const entity = await (await ctx.backend()).createEntity({ model: o.model, name: o.name, instructions, ...settingsOf(o) });
  if (o.json) return printJson(ctx.io, entity);
  ctx.io.stdout.write(entity.id + '\n');
  if (ctx.io.stderrIsTTY) ctx.io.stderr.write(`created entity ${entity.name ? JSON.stringify(safe(entity.name)) + ' ' : ''}${entity.id}\n`);
}
