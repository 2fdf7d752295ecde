import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import type { ExportFormat, SearchHit, Usage } from '../core/wire/entity-types.js';
import type { EntityWindowPrompt } from '../core/wire/rotation-types.js';
import { usageText } from './finish-notice.js';
import { windowLimit } from '../core/window-plan.js';
import { needAdmin } from './chat-errors.js';
import type { ChatItem, ChatSources, ChatTarget } from './chat-types.js';
import { STEER_COMMANDS } from './chat-steer.js';

/** What a slash command shows: an item without its id. */
type Shown = Extract<ChatItem, { kind: 'output' } | { kind: 'error' }> extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

const COMMANDS: [usage: string, what: string][] = [
  ['/help', 'this list'],
  ['/window', 'what the model sees next turn: instructions, pinned memory, summaries, live messages and recalled lines, with their tokens'],
  ['/history [n]', 'the last n transcript messages (default 10)'],
  ['/rotations', 'every rotation of the window: why, what it folded, the summary, undone or not'],
  ['/search TEXT', "find TEXT in this conversation's whole transcript, folded messages included"],
  ['/export [-f] [file]', 'save the transcript (.tar or .json; universes: .json); -f overwrites; ~ is your home'],
  ['/new [name]', 'start a new entity (or universe on the same prompt) and switch to it'],
  ['/switch [ref]', 'switch to another entity or universe (a name or a 4+ character id prefix); without ref, list them'],
  ...STEER_COMMANDS,
  ['/exit', 'leave (Ctrl-D also leaves)'],
];
const USAGE_WIDTH = Math.max(...COMMANDS.map(([usage]) => usage.length)) + 2;

export const HELP = [
  ...COMMANDS.map(([usage, what]) => usage.padEnd(USAGE_WIDTH) + what),
  'Enter sends; end a line with \\ to continue on the next. Up/Down recall earlier inputs.',
  'Tab completes commands, and names and ids after /switch.',
  'Ctrl-A/E or Home/End: line start/end; Ctrl-B/F: a character back/forward; Alt-B/F: a word back/forward;',
  'Ctrl-W: delete a word back; Ctrl-U/K: delete to the line start/end; Delete: the character under the cursor.',
  'Ctrl-C cancels a reply in flight (what came stays on screen, marked): nothing of that turn is stored.',
  'A line entered during a reply is queued and sent when it ends; Ctrl-D during a reply cancels it, then leaves.',
].join('\n');

/** `/window`: every part of the next request with its tokens, then the blocks and the recalled lines it carries. */
export async function windowText(src: ChatSources, target: ChatTarget, lastUsage?: Usage): Promise<string> {
  if (target.kind === 'universe') {
    const doc = await needAdmin(src, 'universes show').getUniverseDoc(target.id);
    return `${doc.runtime.conversation.length} runtime messages (the model sees the last 64, trimmed by 16 at a time)`;
  }
  const w = await src.backend.getWindowPrompt(target.id);
  const lines = w.blocks.map((b) => {
    const span = b.covers[0] === b.covers[1] ? `#${b.covers[0]}` : `#${b.covers[0]}–${b.covers[1]}`;
    const kind = b.kind === 'summary' ? 'summary' : b.role;
    return `${span.padEnd(12)} ${kind.padEnd(9)} ${String(b.tokens).padStart(6)} tok  ${preview(b.content)}`;
  });
  // A server from before the parts were reported answers with the window alone.
  const recalled = (w.parts?.recalled.lines ?? []).map((l) => `${`#${l.seq}`.padEnd(12)} ${'recalled'.padEnd(9)} ${String(l.tokens).padStart(6)} tok  ${preview(l.content ?? '')}`);
  const limit = windowLimit(w);
  const bound = limit.byModel ? ` (the model's context binds; budget ${w.budget_tokens})` : '';
  const last = lastUsage ? [`last turn: ${usageText(lastUsage)}`] : [];
  const parts = w.parts ? [partsLine(w)] : [];
  return [`window: ${w.tokens} / ${limit.tokens} tokens in ${w.blocks.length} blocks${bound}`, ...parts, ...last, ...lines, ...recalled].join('\n');
}

/** The next request before its new message, part by part. */
function partsLine(w: EntityWindowPrompt): string {
  const p = w.parts;
  return `next request: ${w.prompt_tokens} tokens = instructions ${p.instructions.tokens} + pinned memory ${p.memory.tokens} + summaries ${p.summaries.tokens} + live messages ${p.messages.tokens} + recalled ${p.recalled.tokens}`;
}

/** `/history [n]`: the last n transcript messages; with `when`, each says when it was written. */
export async function historyItem(src: ChatSources, target: ChatTarget, arg: string, when?: (iso: string) => string): Promise<Shown> {
  const n = arg ? Number(arg) : 10;
  if (!Number.isSafeInteger(n) || n < 1 || n > 500) return { kind: 'error', text: '/history takes a count from 1 to 500', exitCode: 2 };
  if (target.kind === 'universe') {
    const doc = await needAdmin(src, 'universes show').getUniverseDoc(target.id);
    const msgs = doc.runtime.conversation.slice(-n);
    return { kind: 'output', text: msgs.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : ''}`).join('\n') || '(no messages yet)' };
  }
  const e = await src.backend.getEntity(target.id);
  const page = await src.backend.listMessages(target.id, { after: Math.max(0, e.transcript.messages - n), limit: n });
  const line = (m: (typeof page.data)[number]) => `#${m.seq} ${m.role}${when ? ` (${when(m.created_at)})` : ''}: ${m.content}`;
  return { kind: 'output', text: page.data.map(line).join('\n') || '(no messages yet)' };
}

/** `/search TEXT`: this entity's (or universe's) messages that match, most relevant first. */
export async function searchItem(src: ChatSources, target: ChatTarget, arg: string, when?: (iso: string) => string): Promise<Shown> {
  if (!arg.trim()) return { kind: 'error', text: '/search takes the words to find: /search zanzibar42', exitCode: 2 };
  const where = target.kind === 'universe' ? { source: 'universes' as const, universe_ids: [target.id] } : { entity_ids: [target.id] };
  const list = await src.backend.search({ q: arg, ...where, limit: 10 });
  const line = (h: SearchHit) => `#${h.seq} ${h.role}${when ? ` (${when(h.created_at)})` : ''}: ${h.snippet}`;
  return { kind: 'output', text: list.data.map(line).join('\n') || `(nothing matches ${JSON.stringify(arg)})` };
}

/** `/export [-f] [file]`: the transcript to a file (.tar or .json; universes: their document as .json). */
export async function exportItem(src: ChatSources, target: ChatTarget, label: string, arg: string, home: string): Promise<Shown> {
  const m = /^(?:(-f|--force)(?:\s+|$))?(.*)$/s.exec(arg)!;
  const force = m[1] !== undefined;
  const base = label.replace(/[^\w.-]+/g, '-');
  const given = m[2].trim() || `${base}.${target.kind === 'universe' ? 'json' : 'tar'}`;
  const file = expandHome(given, home);
  try {
    if (target.kind === 'universe') {
      await writeAll(file, [Buffer.from(JSON.stringify(await needAdmin(src, 'universes show').getUniverseDoc(target.id), null, 2) + '\n')], force);
      return { kind: 'output', text: `saved the universe document to ${file}` };
    }
    const format: ExportFormat = file.endsWith('.json') ? 'json' : 'tar';
    const bytes = await writeAll(file, src.backend.exportEntity(target.id, format), force);
    return { kind: 'output', text: `exported ${format} to ${file} (${bytes} bytes)` };
  } catch (err) {
    const shown = fileError(err, file, given);
    if (shown) return shown;
    throw err;
  }
}

/** `~` and `~/…` are the home directory, as in a shell. */
export function expandHome(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

/** A file that cannot be written, as one line and what to do about it (never a raw errno). */
function fileError(err: unknown, file: string, given: string): Shown | undefined {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EEXIST':
      return { kind: 'error', text: `${file} already exists`, hint: `/export -f ${given} overwrites it`, exitCode: 2 };
    case 'ENOENT':
      return { kind: 'error', text: `no directory ${dirname(file)}`, hint: 'create it first, or export to another path', exitCode: 4 };
    case 'EISDIR':
      return { kind: 'error', text: `${file} is a directory`, hint: 'give a file name inside it', exitCode: 2 };
    case 'EACCES':
    case 'EPERM':
      return { kind: 'error', text: `cannot write ${file}: permission denied`, hint: 'export to another path', exitCode: 1 };
  }
  return undefined;
}

function preview(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

/**
 * Streams pieces to a new file (with `force`, to a temporary file renamed over the old one, so a
 * failure leaves the old file as it was); a failure removes nothing it did not create.
 */
async function writeAll(file: string, pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, force = false): Promise<number> {
  const dest = force ? join(dirname(file), `.${basename(file)}.${process.pid}.tmp`) : file;
  const out = createWriteStream(dest, { flags: 'wx' });
  await once(out, 'open');
  let n = 0;
  try {
    for await (const p of pieces) {
      n += p.length;
      if (!out.write(p)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    if (force) await rename(dest, file);
  } catch (err) {
    out.destroy();
    await rm(dest, { force: true });
    throw err;
  }
  return n;
}
