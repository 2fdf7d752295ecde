import type { Hash } from 'node:crypto';
import { createRequire } from 'node:module';
import { BadRequestError } from '../core/errors.js';
import { parseWrittenAt } from '../core/wire/written-at.js';

// node:crypto is required on first use: a static import would load it for every command (~2 ms).
const requireBuiltin = createRequire(import.meta.url);
const sha256 = (): Hash => (requireBuiltin('node:crypto') as typeof import('node:crypto')).createHash('sha256');

/** One line of a batch file. Exactly one of entity, universe and newEntity says where it goes. */
export interface BatchJob {
  id: string;
  /** 1-based line in the file, for messages. */
  line: number;
  entity?: string;
  universe?: string;
  newEntity?: { name?: string; instructions?: string; model?: string };
  input: string;
  /** Universe jobs: the model alias. */
  model?: string;
  /** Entity jobs: when the message was written (ISO 8601, as the line gave it; the engine checks it). */
  at?: string;
}

export type BatchResult = { id: string; ms: number; entity?: string; universe?: string } & (
  | { ok: true; reply: string; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; replayed?: boolean; toolCalls?: unknown[] }
  | { ok: false; error: { message: string; status?: number; exitCode: number }; changed?: true; notRun?: true }
);

const JOB_ID = /^[A-Za-z0-9._:-]{1,100}$/;
const FIELDS = new Set(['id', 'entity', 'universe', 'newEntity', 'input', 'model', 'at']);

/**
 * Parses and checks a whole JSONL batch before anything runs: a bad line stops the batch with
 * every problem listed (up to 10), and nothing is sent.
 */
export function parseJobs(text: string): BatchJob[] {
  const jobs: BatchJob[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      problems.push(`line ${line}: not JSON`);
      return;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      problems.push(`line ${line}: not a JSON object`);
      return;
    }
    const o = v as Record<string, unknown>;
    const bad = (why: string) => problems.push(`line ${line}${typeof o.id === 'string' ? ` (${o.id})` : ''}: ${why}`);
    const extra = Object.keys(o).filter((k) => !FIELDS.has(k));
    if (extra.length) return bad(`unknown fields ${extra.join(', ')}`);
    if (typeof o.id !== 'string' || !JOB_ID.test(o.id)) return bad('id must be 1-100 characters of A-Z a-z 0-9 . _ : -');
    if (seen.has(o.id)) return bad(`id ${o.id} appears twice`);
    seen.add(o.id);
    const targets = ['entity', 'universe', 'newEntity'].filter((k) => o[k] !== undefined);
    if (targets.length !== 1) return bad('give exactly one of entity, universe, newEntity');
    if (o.entity !== undefined && (typeof o.entity !== 'string' || !o.entity)) return bad('entity must be an id or a name');
    if (o.universe !== undefined && (typeof o.universe !== 'string' || !o.universe)) return bad('universe must be an id');
    if (o.newEntity !== undefined) {
      const n = o.newEntity as Record<string, unknown>;
      if (typeof n !== 'object' || n === null || Array.isArray(n)) return bad('newEntity must be an object ({ name?, instructions?, model? })');
      for (const k of Object.keys(n)) {
        if (!['name', 'instructions', 'model'].includes(k)) return bad(`newEntity.${k} is not a field`);
        if (typeof n[k] !== 'string') return bad(`newEntity.${k} must be a string`);
      }
    }
    if (typeof o.input !== 'string' || !o.input.trim()) return bad('input must be a non-empty string');
    if (o.model !== undefined && (typeof o.model !== 'string' || o.universe === undefined)) return bad('model is a universe job\'s model alias');
    const at = atProblem(o);
    if (at) return bad(at);
    jobs.push({
      id: o.id,
      line,
      input: o.input,
      ...(o.entity !== undefined ? { entity: o.entity as string } : {}),
      ...(o.universe !== undefined ? { universe: o.universe as string } : {}),
      ...(o.newEntity !== undefined ? { newEntity: o.newEntity as BatchJob['newEntity'] } : {}),
      ...(o.model !== undefined ? { model: o.model as string } : {}),
      ...(o.at !== undefined ? { at: o.at as string } : {}),
    });
  });
  if (problems.length) {
    const shown = problems.slice(0, 10).join('\n  ');
    throw new BadRequestError(`the batch has ${problems.length} bad line${problems.length > 1 ? 's' : ''}; nothing was run:\n  ${shown}`);
  }
  if (!jobs.length) throw new BadRequestError('the batch has no jobs');
  return jobs;
}

/** What is wrong with a line's `at` (an entity job's date; its form is checked before anything runs, the rest by the engine). */
function atProblem(o: Record<string, unknown>): string | undefined {
  if (o.at === undefined) return undefined;
  if (o.universe !== undefined) return "at dates an entity job's message; a universe job cannot take it";
  try {
    parseWrittenAt(o.at);
    return undefined;
  } catch (err) {
    return `${(err as Error).message} (e.g. 2024-05-07T10:00:00Z)`;
  }
}

/**
 * What identifies a batch across runs: its file (by absolute path), or for stdin its content.
 * A job's idempotency key (entities) or requestId (universes) is this plus the job id, so a re-run
 * replays what finished and sends only what did not.
 */
export function batchKey(source: { path?: string; content: string }): string {
  const basis = source.path ? `file:${source.path}` : `stdin:${source.content}`;
  return sha256().update(basis).digest('hex').slice(0, 16);
}

export function jobKey(batch: string, job: BatchJob): string {
  return `batch-${batch}-${job.id}`;
}

/** What a job asks: its target, input and model. A re-run whose job asks something else must not get the old reply. */
export function jobFingerprint(job: BatchJob): string {
  // A date joins what a job asks only when given, so the jobs of runs from before it keep their fingerprints.
  const asked = { entity: job.entity, universe: job.universe, newEntity: job.newEntity, input: job.input, model: job.model, ...(job.at !== undefined ? { at: job.at } : {}) };
  return sha256().update(JSON.stringify(asked)).digest('hex');
}

/**
 * The key a job is sent with: its first version keeps the plain key (so runs from before
 * fingerprints were kept still replay), a changed version (run with --fresh) gets its own, so it
 * is a new message, and re-running that version replays it.
 */
export function versionedJobKey(batch: string, job: BatchJob, first: string, current: string): string {
  return first === current ? jobKey(batch, job) : `${jobKey(batch, job)}-${current.slice(0, 16)}`;
}

/** Jobs that must run one after another: those of one entity or universe (new entities: each alone). */
export function groupKey(job: BatchJob, resolvedEntity?: string): string {
  if (job.universe) return `u:${job.universe}`;
  if (job.entity) return `e:${resolvedEntity ?? job.entity}`;
  // newEntity jobs that repeat a name share one entity (names are unique), so they keep file order.
  if (job.newEntity?.name) return `name:${job.newEntity.name}`;
  return `n:${job.id}`;
}

/**
 * Runs jobs with at most `concurrency` at once. Jobs of one group run one after another in file
 * order; a free slot takes the next job of the idle group with the most jobs left (ties: file
 * order), so a long group starts early instead of being left to run alone at the end. Stops taking jobs once `signal` aborts; the first error thrown by
 * `run` is rethrown after the jobs in flight finish.
 */
export function runGroups<T>(groups: T[][], concurrency: number, run: (job: T) => Promise<void>, signal?: AbortSignal): Promise<void> {
  const queues = groups.map((g) => [...g]);
  const running = new Set<number>();
  let failure: { err: unknown } | undefined;
  return new Promise((resolve, reject) => {
    const pump = () => {
      while (running.size < concurrency && !signal?.aborted && !failure) {
        let i = -1;
        for (let n = 0; n < queues.length; n++) {
          if (queues[n].length > 0 && !running.has(n) && (i < 0 || queues[n].length > queues[i].length)) i = n;
        }
        if (i < 0) break;
        const job = queues[i].shift()!;
        running.add(i);
        run(job).then(
          () => {
            running.delete(i);
            pump();
          },
          (err) => {
            failure ??= { err };
            running.delete(i);
            pump();
          },
        );
      }
      if (running.size === 0) {
        if (failure) reject(failure.err);
        else resolve();
      }
    };
    pump();
  });
}
