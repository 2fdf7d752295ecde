import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { runHistory, runList } from './list.js';
import { runEdit, runRm, runSet } from './set.js';

/**
 * `mgpt memory`: an entity's pinned memory. `mgpt memory ENTITY` lists the blocks
 * (`--history`: every change); `set`, `edit` and `rm` change one. A `--json` after a verb is taken by
 * `memory` itself (commander parses a parent's options anywhere), so the verbs read it there too, as
 * `logs show` reads `logs --json`.
 */
export function registerMemory(program: Command, ctx: CliContext): void {
  const memory = examples(
    program
      .command('memory')
      .description("an entity's pinned memory: named text blocks the model sees after its instructions in every turn, never rotated away")
      .argument('[entity]', 'entity id or exact name')
      .option('--history', 'every change: when, by whom (user or model), the text before and after')
      .option('--json', 'JSON output ({memory, tokens, limits}, or {history} with --history)'),
    [
      'mgpt memory ada',
      'mgpt memory set ada user "Ada, a database engineer in Lisbon"',
      'mgpt memory set ada project -f project.md',
      'echo "we deploy on PostgreSQL 15" | mgpt memory set ada deploy -',
      'mgpt memory edit ada project',
      'mgpt memory rm ada deploy',
      'mgpt memory ada --history --json',
    ],
  ).action((ref: string | undefined, o: { history?: boolean; json?: boolean }) => (o.history ? runHistory(ctx, ref, o) : runList(ctx, ref, o)));
  const json = <T extends { json?: boolean }>(o: T): T => ({ ...o, json: o.json || memory.opts<{ json?: boolean }>().json });
  examples(
    memory
      .command('set')
      .description('set one block (new or replaced); refused, changing nothing, past the limits (16 blocks, 2,000 tokens unless configured)')
      .argument('<entity>', 'entity id or exact name')
      .argument('<label>', 'the block: 1-64 letters, digits, "_", "-" or "."')
      .argument('[text]', 'the text; - reads stdin')
      .option('-f, --file <file>', 'read the text from a file')
      .option('--json', 'JSON output (the block)'),
    ['mgpt memory set ada user "Ada, a database engineer"', 'mgpt memory set ada project -f project.md --json', 'pbpaste | mgpt memory set ada notes -'],
  ).action((ref: string, label: string, text: string | undefined, o: { file?: string; json?: boolean }) => runSet(ctx, ref, label, text, json(o)));
  examples(
    memory
      .command('edit')
      .description("open one block in $VISUAL or $EDITOR (a new one starts empty); saved text is set, unchanged text changes nothing")
      .argument('<entity>', 'entity id or exact name')
      .argument('<label>', 'the block')
      .option('--json', 'JSON output (the block)'),
    ['mgpt memory edit ada project', 'EDITOR=nano mgpt memory edit ada user'],
  ).action((ref: string, label: string, o: { json?: boolean }) => runEdit(ctx, ref, label, json(o)));
  examples(
    memory
      .command('rm')
      .description('remove one block (kept in --history)')
      .argument('<entity>', 'entity id or exact name')
      .argument('<label>', 'the block')
      .option('--json', 'JSON output'),
    ['mgpt memory rm ada deploy'],
  ).action((ref: string, label: string, o: { json?: boolean }) => runRm(ctx, ref, label, json(o)));
}
