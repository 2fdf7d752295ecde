import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './db.js';

/** Pages the server's own connection may leave in the WAL before it checkpoints inside a commit: a safety net only. */
export const SERVER_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * How often the worker checkpoints. Each checkpoint that finds new frames copies them and fsyncs
 * the file, on the same two cores as the requests: every 100 ms that cost `mgpt serve` about 0.3 ms
 * of CPU a request and made its commits slower (bench serve-llama, docs/design-server.md). A second
 * of writes is a small WAL for any server (a few hundred pages at 30 completions a second); the
 * connection's own checkpoint stays the safety net past SERVER_AUTOCHECKPOINT_PAGES.
 */
export const CHECKPOINT_INTERVAL_MS = 1000;

// The worker's code, CommonJS: its own connection runs a PASSIVE checkpoint (it never blocks
// writers or readers) every interval, so the fsyncs of a checkpoint happen off the event loop.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { nativeBinding: workerData.binding });
db.pragma('busy_timeout = 1000');
db.pragma('synchronous = NORMAL');
let n = 0;
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage(++n);
  } catch {
    // busy or gone: the next interval tries again
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** A running background checkpointer. */
export interface Checkpointer {
  /** Checkpoints the worker has run so far. */
  readonly runs: number;
  /** Stops the worker (after its current checkpoint) and restores the connection's automatic checkpoints. */
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the event loop for a long-lived server: an automatic checkpoint runs
 * inside the commit that passes 1,000 pages and fsyncs the file, stalling every request for it.
 * The connection's threshold is raised to a safety net and a worker thread checkpoints instead.
 * A checkpoint never changes what a reader sees, so no guarantee depends on when it runs.
 */
export function startCheckpointer(db: Db, binding: string | undefined, intervalMs = CHECKPOINT_INTERVAL_MS): Checkpointer {
  const require = createRequire(import.meta.url);
  const previous = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { module: require.resolve('better-sqlite3'), binding, path: db.name, intervalMs },
  });
  worker.unref();
  let runs = 0;
  let exited = false;
  worker.on('message', (n: number) => (runs = n));
  worker.once('exit', () => (exited = true));
  worker.on('error', () => {
    // The worker could not open the file: the connection checkpoints as before.
    if (db.open) db.pragma(`wal_autocheckpoint = ${previous}`);
  });
  db.pragma(`wal_autocheckpoint = ${SERVER_AUTOCHECKPOINT_PAGES}`);
  let stopped: Promise<void> | undefined;
  return {
    get runs() {
      return runs;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${previous}`);
        if (exited) return resolve();
        worker.once('exit', () => resolve());
        // Held until it exits: an unref'd worker would let the process end before its 'exit', and with it the caller's wait.
        worker.ref();
        worker.postMessage('stop');
      });
      return stopped;
    },
  };
}
