import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { type ChatSource } from '../../core/wire/chat-import.js';
import { BadRequestError, MgptError, PayloadTooLargeError } from '../../core/errors.js';
import { type SourceConversation } from './conversation.js';
import { type RawValue, countJsonValues, streamJsonValues } from './json-stream.js';
import { detect } from './read-conversation.js';
import { ConversationReader } from './reader-pool.js';
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
  /** Stops the worker thread that reads large conversations, if one started. */
  close(): Promise<void>;
}

/**
 * Opens an export file (a JSON file, or the .zip ChatGPT and Claude send, read in place) and tells
 * its format from the first conversation when `from` is auto. Nothing is held but the
 * conversation being read. An export of more than `maxConversations` is refused (413) before any
 * is read: they are counted first, which costs a scan of the bytes and stops past the limit.
 */
export async function openExport(path: string, from: ChatSource | 'auto', maxConversations: number): Promise<OpenedExport> {
  const zip = isZip(await head(path));
  const what = zip ? 'conversations.json in the zip' : 'the export';
  const bytes = async () => (zip ? guardZip(await zipEntryStream(path, 'conversations.json')) : createReadStream(path));
  const count = await countJsonValues(await bytes(), what, maxConversations);
  if (count > maxConversations) throw tooMany(maxConversations);
  const values = streamJsonValues(await bytes(), what);
  const reader = new ConversationReader(what);
  try {
    const first = await values.next();
    if (first.done && from === 'auto') detect(undefined);
    const read = first.done ? undefined : await reader.read(first.value, from);
    const source = read?.source ?? (from as ChatSource);
    const start = read && first.value ? { conversation: read.conversation, offset: first.value.offset, index: 0 } : undefined;
    return { source, conversations: conversationsOf(start, values, reader, source), close: () => reader.close() };
  } catch (err) {
    await reader.close();
    throw err;
  }
}

async function* conversationsOf(first: ReadConversation | undefined, rest: AsyncGenerator<RawValue>, reader: ConversationReader, source: ChatSource): AsyncGenerator<ReadConversation> {
  if (!first) return;
  yield first;
  for await (const raw of rest) yield { conversation: (await reader.read(raw, source)).conversation, offset: raw.offset, index: raw.count - 1 };
}

function tooMany(max: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`import: the export holds more than ${max.toLocaleString('en-US')} conversations, the most one import may hold`, {
    hint: `import it in parts of at most ${max.toLocaleString('en-US')} (for example jq '.[0:${max}]' conversations.json > part-1.json), or raise the limit: engine.importMaxConversations (mgpt config set), or mgpt serve --import-max-conversations on the server`,
  });
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
