import { Worker } from 'node:worker_threads';
import type { ChatSource } from '../../core/wire/chat-import.js';
import { BadRequestError } from '../../core/errors.js';
import type { RawValue } from './json-stream.js';
import { type ReadValue, readConversation } from './read-conversation.js';

/**
 * From this size a conversation is parsed and read on a worker thread: JSON.parse cannot be
 * sliced, and 60 MB of one conversation (300,000 branches) held the event loop for over a second.
 * Smaller ones take well under a millisecond per 100 KB and are read here.
 */
export const OFF_THREAD_BYTES = 1024 * 1024;

export interface ReaderRequest {
  id: number;
  raw: RawValue;
  source: ChatSource | 'auto';
  what: string;
}

export type ReaderReply = { id: number; read: ReadValue } | { id: number; error: { message: string; hint?: string; known: boolean } };

/** Reads an export's conversations one at a time; the large ones on a worker thread started when the first comes. */
export class ConversationReader {
  private worker: Worker | undefined;
  private nextId = 1;

  constructor(private readonly what: string) {}

  async read(raw: RawValue, source: ChatSource | 'auto'): Promise<ReadValue> {
    if (raw.bytes.length < OFF_THREAD_BYTES) return readConversation(raw, source, this.what);
    return this.offThread(raw, source);
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private offThread(raw: RawValue, source: ChatSource | 'auto'): Promise<ReadValue> {
    const worker = (this.worker ??= spawnReader());
    const id = this.nextId++;
    return new Promise<ReadValue>((resolve, reject) => {
      const done = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (m: ReaderReply) => {
        if (m.id !== id) return;
        done();
        if ('read' in m) return resolve(m.read);
        reject(m.error.known ? new BadRequestError(m.error.message, { hint: m.error.hint }) : new Error(m.error.message));
      };
      const onError = (err: Error) => {
        done();
        this.worker = undefined;
        reject(err);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      // The bytes are the value's own copy (json-stream.ts): handed over, not copied again.
      const bytes = raw.bytes;
      worker.postMessage({ id, raw, source, what: this.what } satisfies ReaderRequest, [bytes.buffer as ArrayBuffer]);
    });
  }
}

function spawnReader(): Worker {
  const here = import.meta.url;
  const file = here.endsWith('.ts') ? './reader-worker-dev.mjs' : './import-reader.cjs';
  const w = new Worker(new URL(file, here));
  w.unref();
  return w;
}
