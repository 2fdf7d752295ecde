import { Worker } from 'node:worker_threads';
import { nextMacrotask } from '../../core/lane.js';
import type { BlockRow, ChatImportWrite, EntityImport, EntityTurnWrite, ImportConflict, MessageRow } from '../types.js';

/** From this many rows (messages and blocks) an entity's write goes to the worker: fewer take a few ms here. */
export const LARGE_WRITE_ROWS = 1_000;

/** Rows copied to the worker per turn of the event loop: the copy (a structured clone) is synchronous. */
const ROWS_PER_POST = 2_000;

/** One unit of work the worker runs in one transaction; the entity's rows were sent before it (`rows`). */
export type LargeJob =
  | { kind: 'commitTurn'; write: EntityTurnWrite }
  | { kind: 'importEntity'; entity: EntityImport }
  | { kind: 'importChat'; write: ChatImportWrite };

/** The rows of a write, sent to the worker ahead of it. */
export type WriterRows = Pick<EntityImport, 'messages' | 'blocks'>;

/** What the worker is sent. */
export type WriterMessage =
  | { type: 'rows'; job: number; messages: MessageRow[]; blocks: BlockRow[] }
  | { type: 'run'; job: number; work: LargeJob }
  | { type: 'drop'; job: number }
  | { type: 'stop' };

/** What the worker answers a run with. */
export type WriterReply =
  | { job: number; result: boolean | ImportConflict }
  | { job: number; error: { name: string; message: string; code?: string } };

interface Waiting {
  resolve: (result: boolean | ImportConflict) => void;
  reject: (err: Error) => void;
}

/**
 * Writes an entity with thousands of rows (a branch's history, an import) from a worker thread with
 * its own connection, in one transaction there, so the event loop keeps answering meanwhile: held
 * here, 25,000 message rows and their search index took 0.3-0.5 s in one piece. The rows are
 * handed over in slices, each in its own turn of the loop, and stay in the worker until its
 * transaction: a reader sees the whole entity or none of it, and a turn that fails before its
 * commit sends nothing. While that transaction runs the server's own writes wait (`busy`) rather
 * than block the thread on SQLite's busy timeout.
 */
export class LargeWriter {
  private nextJob = 1;
  private readonly waiting = new Map<number, Waiting>();
  private tail: Promise<unknown> = Promise.resolve();
  private running: Promise<void> | undefined;
  private broken: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.unref();
    worker.on('message', (m: WriterReply) => this.settle(m));
    worker.on('error', (err) => this.fail(err));
    worker.once('exit', () => this.fail(new Error('the worker that writes large entities stopped')));
  }

  /** Starts the worker on the database file at `path` (already migrated by the server's connection). */
  static start(path: string): LargeWriter {
    return new LargeWriter(spawnWorker(path));
  }

  /** Set while the worker's transaction may hold the write lock: the server's writes wait for it. */
  get busy(): Promise<void> | undefined {
    return this.running;
  }

  /** Whether the worker stopped (an error, or stop()): a new one must be started. */
  get stopped(): boolean {
    return this.broken !== undefined;
  }

  /** EntityStore.commitTurn for a turn that creates a large entity (`w.create`). */
  async commitTurn(w: EntityTurnWrite & { create: EntityImport }): Promise<boolean> {
    const result = await this.run(w.create, (create) => ({ kind: 'commitTurn', write: { ...w, create } }));
    return result as boolean;
  }

  /** EntityStore.importEntity for a large entity. */
  async importEntity(i: EntityImport): Promise<ImportConflict> {
    const result = await this.run(i, (entity) => ({ kind: 'importEntity', entity }));
    return result as ImportConflict;
  }

  /** EntityStore.importChat for a large conversation: its rows go as an import's, the rest of the write with the job. */
  async importChat(w: ChatImportWrite): Promise<boolean> {
    const rows = chatRows(w);
    const result = await this.run(rows, () => ({ kind: 'importChat', write: bareChat(w) }));
    return result as boolean;
  }

  /** Stops the worker once its queue is done; a write sent after this fails. */
  stop(): Promise<void> {
    if (this.broken) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.worker.once('exit', () => resolve());
      // Held until it exits: an unref'd worker would let the process end before its 'exit'.
      this.worker.ref();
      this.post({ type: 'stop' });
    });
  }

  /**
   * One job at a time, each after a turn of the loop: its rows in slices, then the job itself
   * (without them). Only one job's rows are in the worker at once, and the writes that waited on
   * `busy` (resumed as soon as a transaction ends) go in between two large ones, not after all.
   */
  private run<R extends WriterRows>(rows: R, job: (bare: R) => LargeJob): Promise<boolean | ImportConflict> {
    const id = this.nextJob++;
    const result = this.tail.then(nextMacrotask).then(async () => {
      await this.sendRows(id, rows);
      return this.inTransaction(() => this.ask(id, job({ ...rows, messages: [], blocks: [] })));
    });
    this.tail = result.catch(() => this.post({ type: 'drop', job: id }));
    return result;
  }

  private async sendRows(job: number, rows: WriterRows): Promise<void> {
    const { messages, blocks } = rows;
    for (let i = 0; i < Math.max(messages.length, blocks.length); i += ROWS_PER_POST) {
      if (this.broken) throw this.broken;
      this.post({ type: 'rows', job, messages: messages.slice(i, i + ROWS_PER_POST), blocks: blocks.slice(i, i + ROWS_PER_POST) });
      await nextMacrotask();
    }
  }

  /** Runs `step` (the worker's transaction) with `busy` set until it ends. */
  private async inTransaction<T>(step: () => Promise<T>): Promise<T> {
    let open!: () => void;
    this.running = new Promise<void>((resolve) => (open = resolve));
    try {
      return await step();
    } finally {
      this.running = undefined;
      open();
    }
  }

  private ask(job: number, work: LargeJob): Promise<boolean | ImportConflict> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.waiting.set(job, { resolve, reject });
      this.post({ type: 'run', job, work });
    });
  }

  private post(m: WriterMessage): void {
    if (!this.broken) this.worker.postMessage(m);
  }

  private settle(m: WriterReply): void {
    const w = this.waiting.get(m.job);
    this.waiting.delete(m.job);
    if (!w) return;
    if ('error' in m) w.reject(Object.assign(new Error(m.error.message), m.error));
    else w.resolve(m.result);
  }

  /** The worker is gone: its transaction, if one was open, was rolled back with its connection. */
  private fail(err: Error): void {
    this.broken ??= err;
    for (const w of this.waiting.values()) w.reject(this.broken);
    this.waiting.clear();
  }
}

/**
 * The worker: dist/sqlite-writer.cjs beside the running bundle, or, run from source (tests, tsx),
 * the TypeScript module through a bootstrap that loads tsx first.
 */
function spawnWorker(path: string): Worker {
  const here = import.meta.url;
  const file = here.endsWith('.ts') ? './large-write-worker-dev.mjs' : './sqlite-writer.cjs';
  return new Worker(new URL(file, here), { workerData: { path } });
}

/** A chat import's rows, in the shape the worker collects (messages and blocks). */
export function chatRows(w: ChatImportWrite): WriterRows {
  return { messages: w.create?.messages ?? w.append?.messages ?? [], blocks: w.create?.blocks ?? w.append?.insertBlocks ?? [] };
}

function bareChat(w: ChatImportWrite): ChatImportWrite {
  return {
    source: w.source,
    create: w.create && { ...w.create, messages: [], blocks: [] },
    append: w.append && { ...w.append, messages: [], insertBlocks: [] },
  };
}

/** The write with the rows the worker collected put back where they came from. */
export function withChatRows(w: ChatImportWrite, rows: { messages: MessageRow[]; blocks: BlockRow[] }): ChatImportWrite {
  return {
    source: w.source,
    create: w.create && { ...w.create, messages: rows.messages, blocks: rows.blocks },
    append: w.append && { ...w.append, messages: rows.messages, insertBlocks: rows.blocks },
  };
}
