import type { Command } from 'commander';
import { plural } from '../../../core/text/numbers.js';
import type { Entity } from '../../../core/wire/entity-types.js';
import type { CliContext } from '../../context.js';
import { resolveEntity } from '../../entity-ref.js';
import { localRouteText } from '../../route-memory.js';
import { examples } from '../../help.js';
import { memoryLine } from '../memory/list.js';
import { colors, formatInt, limitNote, printJson, sanitizeForTerminal as safe, windowLine } from '../../output.js';

/** What each recall mode does, in a line. */
const RECALL_LINES: Record<NonNullable<Entity['recall']> | 'off', string> = {
  auto: 'auto: earlier messages the window folded away are recalled into the prompt before each turn',
  tool: 'tool: the model may search its own transcript',
  off: 'off',
};

export function registerShow(entities: Command, ctx: CliContext): void {
  examples(
    entities.command('show').description('show one entity (id or exact name): its settings and its pinned memory').argument('<entity>').option('--json', 'JSON output (the entity, with its pinned memory as pinned_memory: { memory, tokens, limits })'),
    ['mgpt entities show ada', 'mgpt entities show 0b7c... --json'],
  ).action((ref: string, o: { json?: boolean }) => runShow(ctx, ref, o));
}

/** Who answers the entity's model: the provider and model of this profile's route, or the server's. */
function routeLine(ctx: CliContext, model: string): string {
  const s = ctx.settings();
  return s.backend === 'local' ? `${localRouteText(ctx, model)} (profile ${s.profile})` : `the server's (${s.baseUrl ?? 'remote'})`;
}

export async function runShow(ctx: CliContext, ref: string, o: { json?: boolean }): Promise<void> {
  const e = await resolveEntity(ctx, ref);
  const memory = await (await ctx.backend()).listMemory(e.id);
  if (o.json) return printJson(ctx.io, { ...e, pinned_memory: memory });
  const c = colors(ctx);
  for (const [k, v] of headRows(ctx, e)) ctx.io.stdout.write(`${c.bold(k.padEnd(12))}${v}\n`);
  if (e.instructions) ctx.io.stdout.write(`${c.bold('instructions')}\n${safe(e.instructions)}\n`);
  ctx.io.stdout.write(`${c.bold(memoryLine(memory))}\n`);
  for (const b of memory.memory) ctx.io.stdout.write(`  ${c.bold(safe(b.label))} ${c.dim(`(${plural(b.tokens, 'token')})`)}\n${indent(safe(b.text))}\n`);
}

function indent(text: string): string {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

/** Every setting of the entity, one a line: what `entities create` and `update` set. */
function headRows(ctx: CliContext, e: Entity): Array<[string, string]> {
  const c = colors(ctx);
  const w = e.window;
  const rows: Array<[string, string]> = [
    ['id', e.id],
    ['name', safe(e.name) || c.dim('(none)')],
    ['model', `${e.model} (state: ${safe(e.state)})`],
    ['route', routeLine(ctx, e.model)],
    ['status', e.read_only ? c.yellow('read-only: transcript at the cap') : 'active'],
    ['transcript', `${plural(e.transcript.messages, 'message')}, ${formatInt(e.transcript.tokens)} / ${formatInt(e.transcript.cap_tokens)} tokens`],
    ['window', windowLine(w.tokens ?? 0, w, 12) + `, ${w.blocks ?? 0} blocks${limitNote(w)}`],
    ['recall', RECALL_LINES[e.recall ?? 'off'] + (e.recall && e.recall_tokens ? `; at most ${formatInt(e.recall_tokens)} tokens a turn` : '')],
    ['memory tool', e.memory_tool ? 'on: every turn offers the model remember' : 'off: a turn offers remember only when its send asks (--memory-tool)'],
    ['created', safe(e.created_at)],
    ['updated', safe(e.updated_at)],
  ];
  return rows;
}
