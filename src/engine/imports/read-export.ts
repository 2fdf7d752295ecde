import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { type ChatSource } from '../../core/wire/chat-import.js';
import { BadRequestError, MgptError } from '../../core/errors.js';
import { readChatGpt } from './chatgpt.js';
import { readClaude } from './claude.js';
import { type SourceConversation, isObject } from './conversation.js';
import { type StreamedValue, streamJsonArray } from './json-stream.js';
import { readOpenWebUi } from './openwebui.js';
import { isZip, zipEntryStream } from './zip-entry.js';

/** A conversation of the export, with where its bytes were. */
export interface ReadConversation {
  conversation: SourceConversation;
  offset: number;
  index: number;
}

export interface OpenedExport {
  source: ChatSource;
  /** The export's conversations one at a time, in file order. */
  conversations: AsyncGenerator<ReadConversation>;
}

const READERS: Record<ChatSource, (raw: Record<string, unknown>, index: number) => SourceConversation> = {
  chatgpt: readChatGpt,
  claude: readClaude,
  openwebui: readOpenWebUi,
};

/**
 * Opens an export file (a JSON file, or the .zip ChatGPT and Claude send, read in place) and tells
 * its format from the first conversation when `from` is auto. Nothing is held but the
 * conversation being read.
 */
export async function openExport(path: string, from: ChatSource | 'auto'): Promise<OpenedExport> {
  const zip = isZip(await head(path));
  const what = zip ? 'conversations.json in the zip' : 'the export';
  const bytes = zip ? guardZip(await zipEntryStream(path, 'conversations.json')) : createReadStream(path);
  const values = streamJsonArray(bytes, what);
  const first = await values.next();
  const source = from === 'auto' ? detect(first.done ? undefined : first.value.value) : from;
  const read = READERS[source];
  return { source, conversations: conversationsOf(first.done ? undefined : first.value, values, read, source) };
}

async function* conversationsOf(
  first: StreamedValue | undefined,
  rest: AsyncGenerator<StreamedValue>,
  read: (raw: Record<string, unknown>, index: number) => SourceConversation,
  source: ChatSource,
): AsyncGenerator<ReadConversation> {
  let index = 0;
  for (let v = first; v !== undefined; index++) {
    if (!isObject(v.value)) throw new BadRequestError(`import: conversation ${index + 1} (at byte ${v.offset}) is not an object`);
    if (!fits(v.value, source)) throw notA(source, `conversation ${index + 1} (at byte ${v.offset})`);
    yield { conversation: read(v.value, index), offset: v.offset, index };
    const next = await rest.next();
    v = next.done ? undefined : next.value;
  }
}

/** Which tool's export this conversation comes from, by the fields only that tool writes. */
export function detect(first: unknown): ChatSource {
  if (first === undefined) {
    throw new BadRequestError('import: the export holds no conversations, so its format cannot be told', { hint: 'name it with --from chatgpt|claude|openwebui' });
  }
  for (const s of ['chatgpt', 'claude', 'openwebui'] as const) if (isObject(first) && fits(first, s)) return s;
  if (isObject(first) && 'manifest' in first) {
    throw new BadRequestError('import: this is an mgpt export, not a chat export', { hint: 'mgpt import FILE --from mgpt' });
  }
  throw new BadRequestError('import: cannot tell which tool made this export (no mapping, chat_messages or chat.history)', {
    hint: 'mgpt imports ChatGPT (conversations.json or the .zip), Claude (conversations.json) and Open WebUI (chat-export-*.json); name it with --from',
  });
}

function fits(c: Record<string, unknown>, source: ChatSource): boolean {
  if (source === 'chatgpt') return isObject(c.mapping);
  if (source === 'claude') return Array.isArray(c.chat_messages);
  const chat = isObject(c.chat) ? c.chat : c;
  return isObject(chat.history) || (Array.isArray(chat.messages) && 'title' in c);
}

function notA(source: ChatSource, where: string): BadRequestError {
  const field = { chatgpt: 'mapping', claude: 'chat_messages', openwebui: 'chat.history' }[source];
  return new BadRequestError(`import: ${where} has no ${field}: this is not a ${source} export`, { hint: 'leave out --from to let mgpt tell' });
}

async function head(path: string): Promise<Buffer> {
  let f;
  try {
    f = await open(path, 'r');
  } catch (err) {
    throw new BadRequestError(`import: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const b = Buffer.alloc(4);
    const { bytesRead } = await f.read(b, 0, 4, 0);
    return b.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}

/** A damaged deflate stream (a truncated zip) is bad input, named as such. */
async function* guardZip(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let read = 0;
  try {
    for await (const b of bytes) {
      read += b.length;
      yield b;
    }
  } catch (err) {
    if (err instanceof MgptError) throw err;
    throw new BadRequestError(`import: conversations.json in the zip is damaged after byte ${read}: ${(err as Error).message}`, {
      hint: 'the zip may be cut short: download the export again',
    });
  }
}
