import type { Command } from 'commander';
import type { ChatMessage } from '../../core/chat.js';
import type { EntityWindowPrompt } from '../../core/wire/rotation-types.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import { plural } from '../../core/text/numbers.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { colors, formatInt, limitNote, printJson, printTable, sanitizeForTerminal, windowLine } from '../output.js';

interface WindowOptions {
  json?: boolean;
  at?: string;
  prompt?: boolean;
}

export function registerWindow(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('window')
      .description('show what the model sees next turn: every part of the request (instructions, pinned memory, summaries, live messages, recalled lines) with its tokens')
      .argument('<entity>', 'entity id or exact name')
      .option('--at <seq|date>', 'the window the model saw when it answered the message at this seq (or the last turn stored by this date)')
      .option('--prompt', 'print the provider messages themselves (the next request before its new message; with --at, the request that turn sent)')
      .option('--json', 'JSON output (the entity.window object with the request\'s parts; with --prompt, the messages; with --at, also the prompt as it was sent)'),
    [
      'mgpt window ada',
      "mgpt window ada --json | jq '.parts'",
      'mgpt window ada --prompt',
      'mgpt window ada --at 41 --prompt',
      "mgpt window ada --at 2026-11-26T10:00:00Z --json | jq '.prompt'",
    ],
  ).action((ref: string, o: WindowOptions) => runWindow(ctx, ref, o));
}

export async function runWindow(ctx: CliContext, ref: string, o: WindowOptions): Promise<void> {
  const entity = await resolveEntity(ctx, ref);
  if (o.at !== undefined) return windowAt(ctx, entity.id, o.at, o);
  const w = await (await ctx.backend()).getWindowPrompt(entity.id);
  if (o.prompt) return o.json ? printJson(ctx.io, w.prompt) : printMessages(ctx, w.prompt);
  if (o.json) {
    const { prompt: _prompt, ...parts } = w;
    return printJson(ctx.io, parts);
  }
  // The gauge and the sums are for people; piped output is the parts, one per line.
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(colors(ctx).bold(headLines(w).join('\n')) + '\n\n');
  printParts(ctx, w, entity.instructions);
}

/** The window against its limit, then the next request's size and what it is made of. */
function headLines(w: EntityWindowPrompt): string[] {
  const summaries = w.blocks.filter((b) => b.kind === 'summary').length;
  const p = w.parts;
  return [
    `window ${windowLine(w.tokens, w)}  ${w.blocks.length} blocks (${summaries} summary)${limitNote(w)}`,
    `next request ${formatInt(w.prompt_tokens)} tokens before the new message: instructions ${formatInt(p.instructions.tokens)}, ` +
      `pinned memory ${formatInt(p.memory.tokens)}, summaries ${formatInt(p.summaries.tokens)}, live messages ${formatInt(p.messages.tokens)}, ` +
      `recalled ${formatInt(p.recalled.tokens)} (${p.recalled.lines.length} lines)`,
  ];
}

interface PartRow {
  kind: string;
  covers: string;
  tokens: number;
  role: string;
  content: string;
}

/** Every part in the order the request holds them, then the recalled lines it carries. */
function partRows(w: EntityWindowPrompt, instructions: string): PartRow[] {
  const rows: PartRow[] = [];
  if (w.parts.instructions.blocks) rows.push({ kind: 'instructions', covers: '-', tokens: w.parts.instructions.tokens, role: 'system', content: instructions });
  if (w.parts.memory.blocks) rows.push({ kind: 'memory', covers: '-', tokens: w.parts.memory.tokens, role: 'system', content: pinnedLine(w.parts.memory.blocks) });
  for (const b of w.blocks) {
    rows.push({ kind: b.kind, covers: b.covers[0] === b.covers[1] ? `${b.covers[0]}` : `${b.covers[0]}-${b.covers[1]}`, tokens: b.tokens, role: b.role, content: b.content });
  }
  for (const l of w.parts.recalled.lines) rows.push({ kind: 'recalled', covers: `${l.seq}`, tokens: l.tokens, role: l.role, content: l.content ?? '' });
  return rows;
}

function pinnedLine(blocks: number): string {
  return `${blocks} pinned block${blocks === 1 ? '' : 's'} (mgpt memory list)`;
}

function printParts(ctx: CliContext, w: EntityWindowPrompt, instructions: string): void {
  printTable(
    ctx,
    [
      { header: 'KIND', value: (r: PartRow) => r.kind },
      { header: 'COVERS', value: (r) => r.covers },
      { header: 'TOKENS', value: (r) => formatInt(r.tokens), right: true },
      { header: 'ROLE', value: (r) => r.role },
      { header: 'CONTENT', value: (r) => r.content, max: 60 },
    ],
    partRows(w, instructions),
  );
}

/** `--at`: the window a past turn was answered from; its whole prompt with --json or --prompt. */
async function windowAt(ctx: CliContext, id: string, at: string, o: WindowOptions): Promise<void> {
  const w = await (await ctx.backend()).getWindowAt(id, at);
  if (o.prompt) return o.json ? printJson(ctx.io, w.prompt) : printMessages(ctx, w.prompt);
  if (o.json) return printJson(ctx.io, w);
  const head = `window at seq ${w.seq}: ${plural(w.blocks.length, 'block')}, ${plural(w.tokens, 'token')}; the prompt was ${plural(w.prompt.length, 'message')} (--prompt shows them)`;
  if (ctx.io.stdoutIsTTY) ctx.io.stdout.write(colors(ctx).bold(head) + '\n\n');
  printTable(
    ctx,
    [
      { header: 'KIND', value: (b) => b.kind },
      { header: 'COVERS', value: (b) => (b.covers[0] === b.covers[1] ? `${b.covers[0]}` : `${b.covers[0]}-${b.covers[1]}`) },
      { header: 'TOKENS', value: (b) => formatInt(b.tokens), right: true },
      { header: 'ROLE', value: (b) => b.role },
      { header: 'CONTENT', value: (b) => b.content, max: 60 },
    ],
    w.blocks,
  );
}

/** Each message as the provider gets it: its place, role and tokens, then its text whole. */
async function printMessages(ctx: CliContext, messages: ChatMessage[]): Promise<void> {
  const tok = await loadTokenEstimator();
  const c = colors(ctx);
  messages.forEach((m, i) => {
    const text = textOf(m);
    const calls = m.role === 'assistant' && m.tool_calls?.length ? `, calls ${m.tool_calls.map((t) => t.function.name).join(', ')}` : '';
    ctx.io.stdout.write(`${i ? '\n' : ''}${c.bold(`[${i + 1}] ${m.role}`)} ${c.dim(`(${formatInt(tok.count(text))} tokens${calls})`)}\n`);
    // The text is the model's and the user's, not the terminal's: no escape sequence of it reaches the screen.
    if (text) ctx.io.stdout.write(sanitizeForTerminal(text) + '\n');
  });
}

function textOf(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (!m.content) return '';
  return m.content.map((p) => (p.type === 'text' ? p.text : `[image ${p.image_url.url.slice(0, 40)}]`)).join('');
}
