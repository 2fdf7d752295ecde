import { parentPort, workerData } from 'node:worker_threads';
import type { BlockRow, MessageRow } from '../types.js';
import { commitTurn, importChat, importEntity } from './entity-writes.js';
import { type LargeJob, type WriterMessage, type WriterReply, withChatRows } from './large-writer.js';
import { SqliteRepos } from './repos.js';

// The worker thread of large-writer.ts (bundled alone as dist/sqlite-writer.cjs): its own
// connection to the server's file, the same pragmas, and the same write functions.

if (!parentPort) throw new Error('large-write-worker.ts runs as a worker thread (see large-writer.ts)');
const port = parentPort;
const repos = SqliteRepos.open((workerData as { path: string }).path);

/** Each job's rows as they arrive, until the job runs (or is dropped). */
const collected = new Map<number, { messages: MessageRow[]; blocks: BlockRow[] }>();

port.on('message', (m: WriterMessage) => {
  if (m.type === 'rows') collect(m.job, m.messages, m.blocks);
  else if (m.type === 'run') port.postMessage(run(m.job, m.work));
  else if (m.type === 'drop') collected.delete(m.job);
  else stop();
});

function collect(job: number, messages: MessageRow[], blocks: BlockRow[]): void {
  let rows = collected.get(job);
  if (!rows) collected.set(job, (rows = { messages: [], blocks: [] }));
  for (const x of messages) rows.messages.push(x);
  for (const x of blocks) rows.blocks.push(x);
}

/** The job in one transaction (rolled back on any error), with the rows sent for it. */
function run(job: number, work: LargeJob): WriterReply {
  const rows = collected.get(job) ?? { messages: [], blocks: [] };
  collected.delete(job);
  try {
    if (work.kind === 'importEntity') return { job, result: repos.transaction(() => importEntity(repos, { ...work.entity, ...rows })) };
    if (work.kind === 'importChat') return { job, result: repos.transaction(() => importChat(repos, withChatRows(work.write, rows))) };
    const w = work.write;
    return { job, result: repos.transaction(() => commitTurn(repos, { ...w, create: w.create && { ...w.create, ...rows } })) };
  } catch (err) {
    const e = err as Error & { code?: string };
    return { job, error: { name: e.name, message: e.message, code: typeof e.code === 'string' ? e.code : undefined } };
  }
}

function stop(): void {
  repos.close();
  port.close();
}
