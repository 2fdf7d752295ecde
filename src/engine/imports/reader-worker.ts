import { parentPort } from 'node:worker_threads';
import { MgptError } from '../../core/errors.js';
import type { ReaderReply, ReaderRequest } from './reader-pool.js';
import { readConversation } from './read-conversation.js';

// The worker thread of reader-pool.ts (bundled alone as dist/import-reader.cjs): a large
// conversation is parsed and read here, so its JSON.parse does not hold the server's event loop.

if (!parentPort) throw new Error('reader-worker.ts runs as a worker thread (see reader-pool.ts)');
const port = parentPort;

port.on('message', (m: ReaderRequest) => {
  let reply: ReaderReply;
  try {
    reply = { id: m.id, read: readConversation({ ...m.raw, bytes: Buffer.from(m.raw.bytes.buffer, m.raw.bytes.byteOffset, m.raw.bytes.byteLength) }, m.source, m.what) };
  } catch (err) {
    const known = err instanceof MgptError;
    reply = { id: m.id, error: { message: (err as Error).message, hint: known ? err.hint : undefined, known } };
  }
  port.postMessage(reply);
});
