import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Backend } from '../core/backend.js';
import type { ExportFormat } from '../core/entity-types.js';
import type { ChatItem, ChatTarget } from './chat-controller.js';

/** What a slash command shows: an item without its id. */
type Shown = Extract<ChatItem, { kind: 'output' } | { kind: 'error' }> extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

/** `/window`: the blocks the model sees now. */
export async function windowText(backend: Backend, target: ChatTarget): Promise<string> {
  if (target.kind === 'universe') {
    const doc = await backend.getUniverseDoc(target.id);
    return `${doc.runtime.conversation.length} runtime messages (the model sees the last 64, trimmed by 16 at a time)`;
  }
  const w = await backend.getWindow(target.id);
  const lines = w.blocks.map((b) => {
    const span = b.covers[0] === b.covers[1] ? `#${b.covers[0]}` : `#${b.covers[0]}–${b.covers[1]}`;
    const kind = b.kind === 'summary' ? 'summary' : b.role;
    return `${span.padEnd(12)} ${kind.padEnd(9)} ${String(b.tokens).padStart(6)} tok  ${preview(b.content)}`;
  });
  return [`window: ${w.tokens} / ${w.budget_tokens} tokens in ${w.blocks.length} blocks`, ...lines].join('\n');
}

/** `/history [n]`: the last n transcript messages. */
export async function historyItem(backend: Backend, target: ChatTarget, arg: string): Promise<Shown> {
  const n = arg ? Number(arg) : 10;
  if (!Number.isSafeInteger(n) || n < 1 || n > 500) return { kind: 'error', text: '/history takes a count from 1 to 500', exitCode: 2 };
  if (target.kind === 'universe') {
    const doc = await backend.getUniverseDoc(target.id);
    const msgs = doc.runtime.conversation.slice(-n);
    return { kind: 'output', text: msgs.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : ''}`).join('\n') || '(no messages yet)' };
  }
  const e = await backend.getEntity(target.id);
  const page = await backend.listMessages(target.id, { after: Math.max(0, e.transcript.messages - n), limit: n });
  return { kind: 'output', text: page.data.map((m) => `#${m.seq} ${m.role}: ${m.content}`).join('\n') || '(no messages yet)' };
}

/** `/export [file]`: the transcript to a new file (.tar or .json; universes: their document as .json). */
export async function exportItem(backend: Backend, target: ChatTarget, label: string, arg: string): Promise<Shown> {
  const base = label.replace(/[^\w.-]+/g, '-');
  if (target.kind === 'universe') {
    const file = arg || `${base}.json`;
    await writeAll(file, [Buffer.from(JSON.stringify(await backend.getUniverseDoc(target.id), null, 2) + '\n')]);
    return { kind: 'output', text: `saved the universe document to ${file}` };
  }
  const file = arg || `${base}.tar`;
  const format: ExportFormat = file.endsWith('.json') ? 'json' : 'tar';
  const bytes = await writeAll(file, backend.exportEntity(target.id, format));
  return { kind: 'output', text: `exported ${format} to ${file} (${bytes} bytes)` };
}

function preview(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

/** Streams pieces to a new file; a failure removes nothing it did not create. */
async function writeAll(file: string, pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<number> {
  const out = createWriteStream(file, { flags: 'wx' });
  await once(out, 'open');
  let n = 0;
  try {
    for await (const p of pieces) {
      n += p.length;
      if (!out.write(p)) await once(out, 'drain');
    }
  } catch (err) {
    out.destroy();
    const { rm } = await import('node:fs/promises');
    await rm(file, { force: true });
    throw err;
  }
  out.end();
  await once(out, 'finish');
  return n;
}
