import { type WriteStream, createWriteStream, readFileSync } from 'node:fs';
import { once, setMaxListeners } from 'node:events';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { dataDir } from '../../config/config.js';
import type { Backend } from '../../core/backend.js';
import { ENTITY_MODEL, type EntityCompletion } from '../../core/wire/entity-types.js';
import { BadRequestError, MgptError, exitCodeOf, isBusy } from '../../core/errors.js';
import { BatchJournal } from '../batch-journal.js';
import { type BatchJob, type BatchResult, batchKey, groupKey, jobFingerprint, parseJobs, runGroups, versionedJobKey } from '../batch-jobs.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { fileProblem, intOption, readStdin } from '../input.js';
import { Progress } from '../progress.js';
import { UUID } from '../../core/ids.js';
import { UNIVERSE_MODEL } from '../../core/wire/universe-types.js';
import { pickByRef } from '../../core/ref.js';

export interface BatchOptions {
  concurrency?: string;
  output?: string;
  fresh?: boolean;
}

export function registerBatch(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('batch')
      .description('run a JSONL file of jobs ({id, entity|universe|newEntity, input, at?}); a re-run resumes without duplicates')
      .argument('<file>', 'the jobs, one JSON object a line; - reads stdin')
      .option('-c, --concurrency <n>', 'jobs at once (jobs of one entity or universe still run in file order)', '4')
      .option('-o, --output <file>', 'write the results as JSONL here instead of stdout')
      .option('--fresh', 'run jobs whose input changed since the last run of this file as new messages (without it they fail: the stored reply answered something else)'),
    [
      'mgpt batch jobs.jsonl -o results.jsonl',
      'mgpt batch jobs.jsonl --concurrency 16 > results.jsonl',
      `echo '{"id":"q1","entity":"ada","input":"Summarize our week."}' | mgpt batch -`,
      `echo '{"id":"n1","newEntity":{"name":"bob"},"input":"Hello!"}' | mgpt batch -`,
      `echo '{"id":"d1","entity":"ada","input":"Jon mentored me today.","at":"2024-05-07T10:00:00Z"}' | mgpt batch -`,
      "jq -c 'select(.ok == false)' results.jsonl",
      'mgpt batch jobs.jsonl --fresh     # after editing some inputs: send the edited jobs again',
    ],
  ).action((file: string, o: BatchOptions) => runBatch(ctx, file, o));
}

export async function runBatch(ctx: CliContext, file: string, o: BatchOptions): Promise<void> {
  const concurrency = intOption('--concurrency', o.concurrency, 1, 256) ?? 4;
  const content = await readJobs(ctx, file);
  const jobs = parseJobs(content);
  // Every job in flight listens for Ctrl-C on the one signal.
  setMaxListeners(concurrency + 10, ctx.signal);
  const key = batchKey(file === '-' ? { content } : { path: resolve(file), content });
  const backend = await ctx.backend();
  const journal = new BatchJournal(join(dataDir(ctx.env), 'batches'), key);
  const resolved = await resolveNames(backend, jobs);
  const groups = groupJobs(jobs, resolved);
  const out = await openOutput(o.output);
  const write = (line: string) => (out ? out.write(line) : ctx.io.stdout.write(line));
  // What every job asks is on disk before the first is sent, so no job waits for an fsync.
  await journal.recordAll(jobs.map((job) => [job.id, jobFingerprint(job)]));
  const progress = new Progress(ctx.io.stderr, jobs.length, ctx.io.stderrIsTTY);
  const tally = { failed: 0, notRun: 0 };
  const jobContext = { batch: key, fresh: o.fresh === true, journal, made: madeByName(jobs, journal) };
  const ordered = inFileOrder(groups, (job) => runJob(backend, job, jobContext, resolved, ctx.signal));
  try {
    await runGroups([...groups.values()], concurrency, async (job) => {
      const result = await ordered(job);
      if (ctx.signal.aborted && !result.ok) return; // cancelled by Ctrl-C: not a result
      if (!result.ok) tally[result.notRun ? 'notRun' : 'failed']++;
      write(JSON.stringify(result) + '\n');
      progress.tick(result.ok);
    }, ctx.signal);
  } finally {
    await closeAll(out, journal, progress);
  }
  summarize(ctx, jobs.length, progress, tally);
}

async function readJobs(ctx: CliContext, file: string): Promise<string> {
  try {
    return file === '-' ? await readStdin(ctx) : readFileSync(file, 'utf8');
  } catch (err) {
    throw new BadRequestError(`cannot read ${file}: ${fileProblem(err)}`);
  }
}

/**
 * Ids are used as they are (a job whose entity does not exist fails alone, with 404); names
 * resolve once, up front: locally each over all entities, remotely from one listing (the wire's newest 200).
 */
async function resolveNames(backend: Backend, jobs: BatchJob[]): Promise<Map<string, string | MgptError>> {
  const resolved = new Map<string, string | MgptError>();
  const names = new Set<string>();
  for (const ref of new Set(jobs.flatMap((j) => (j.entity ? [j.entity] : [])))) {
    if (UUID.test(ref)) resolved.set(ref, ref.toLowerCase());
    else names.add(ref);
  }
  const listed = names.size && backend.kind === 'remote' ? (await backend.listEntities()).data : undefined;
  for (const name of names) {
    try {
      const hit = listed ? pickByRef('entity', name, listed, 'remote names resolve among the 200 most recently active entities; use an id') : await backend.resolveEntity(name);
      resolved.set(name, hit.id);
    } catch (err) {
      if (!(err instanceof MgptError)) throw err;
      resolved.set(name, err);
    }
  }
  return resolved;
}

/** The jobs of each entity or universe, in file order. */
function groupJobs(jobs: BatchJob[], resolved: Map<string, string | MgptError>): Map<string, BatchJob[]> {
  const groups = new Map<string, BatchJob[]>();
  for (const job of jobs) {
    const r = job.entity ? resolved.get(job.entity) : undefined;
    const g = groupKey(job, typeof r === 'string' ? r : undefined);
    const group = groups.get(g);
    if (group) group.push(job);
    else groups.set(g, [job]);
  }
  return groups;
}

/**
 * Keeps an entity's (or universe's) messages in file order: once one of its jobs fails, its later
 * jobs are not sent but reported as not run, so a re-run sends the failed job first and the rest
 * after it. A job refused as changed holds nothing back: its first version already has its place.
 */
function inFileOrder(groups: Map<string, BatchJob[]>, run: (job: BatchJob) => Promise<BatchResult>): (job: BatchJob) => Promise<BatchResult> {
  const groupOf = new Map<BatchJob, BatchJob[]>();
  for (const group of groups.values()) for (const job of group) groupOf.set(job, group);
  const failedIn = new Map<BatchJob[], BatchResult & { ok: false }>();
  return async (job) => {
    const group = groupOf.get(job)!;
    const first = failedIn.get(group);
    if (first) return notRun(job, first);
    const result = await run(job);
    if (!result.ok && !result.changed) failedIn.set(group, result);
    return result;
  };
}

function notRun(job: BatchJob, failed: BatchResult & { ok: false }): BatchResult {
  const where = failed.entity ? { entity: failed.entity } : failed.universe ? { universe: failed.universe } : {};
  return {
    id: job.id, ok: false, notRun: true, ...where, ms: 0,
    error: { message: `not run: job ${failed.id} before it on the same ${failed.universe ? 'universe' : 'entity'} failed, and its messages keep file order`, exitCode: failed.error.exitCode },
  };
}

async function openOutput(path: string | undefined): Promise<WriteStream | null> {
  if (!path) return null;
  const out = createWriteStream(path);
  try {
    await once(out, 'open');
  } catch (err) {
    throw new BadRequestError(`cannot write ${path}: ${fileProblem(err, true)}`);
  }
  return out;
}

async function closeAll(out: WriteStream | null, journal: BatchJournal, progress: Progress): Promise<void> {
  if (out) {
    out.end();
    await once(out, 'finish');
  }
  await journal.withdrawUnsent();
  await journal.close();
  progress.finish();
}

function summarize(ctx: CliContext, total: number, progress: Progress, tally: { failed: number; notRun: number }): void {
  const secs = progress.elapsedMs() / 1000;
  const done = progress.done;
  const notRun = tally.notRun ? `, ${tally.notRun} not run (after a failure on their entity or universe)` : '';
  ctx.io.stderr.write(
    `${done} of ${total} jobs: ${done - tally.failed - tally.notRun} ok, ${tally.failed} failed${notRun} in ${secs.toFixed(1)} s (${(done / Math.max(secs, 1e-3)).toFixed(1)}/s)` +
      `${ctx.signal.aborted ? '; interrupted: run the same command again to finish' : ''}\n`,
  );
  if (tally.failed || tally.notRun) ctx.exitCode = 1;
  if (ctx.signal.aborted) ctx.exitCode = 130;
}

/** How long a job waits for a busy entity: past the 15 s lease of a killed writer. */
const BUSY_WAIT_MS = 30_000;

interface JobContext {
  batch: string;
  fresh: boolean;
  journal: BatchJournal;
  /** The entity each newEntity name made (or is making), this run or an earlier one. */
  made: Map<string, Promise<string>>;
}

/** The entities earlier runs of this file made for newEntity names, from the journal. */
function madeByName(jobs: BatchJob[], journal: BatchJournal): Map<string, Promise<string>> {
  const made = new Map<string, Promise<string>>();
  for (const job of jobs) {
    const name = job.newEntity?.name;
    const id = journal.entity(job.id);
    if (name && id && !made.has(name)) made.set(name, Promise.resolve(id));
  }
  return made;
}

/** The key to send a job with, or a refusal when its input changed and --fresh was not given. */
async function keyForJob(job: BatchJob, c: JobContext): Promise<string | BadRequestError> {
  const current = jobFingerprint(job);
  const first = await c.journal.firstAsked(job.id, current);
  if (first !== current && !c.fresh) {
    return new BadRequestError(
      `job ${job.id} changed since this file last ran (its input, target or model differ), so its stored reply answers something else; nothing was sent`,
      { hint: 'run it as a new message with --fresh, or give it a new id' },
    );
  }
  return versionedJobKey(c.batch, job, first, current);
}

async function runJob(
  backend: Backend,
  job: BatchJob,
  c: JobContext,
  resolved: Map<string, string | MgptError>,
  signal: AbortSignal,
): Promise<BatchResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const key = await keyForJob(job, c);
  if (key instanceof BadRequestError) {
    const where = job.entity ? { entity: job.entity } : job.universe ? { universe: job.universe } : {};
    return { id: job.id, ok: false, changed: true, ...where, error: { message: key.message, exitCode: key.exitCode }, ms: ms() };
  }
  const target: { entity?: string } = {};
  try {
    if (job.universe) return { ...(await universeJob(backend, job, key, signal)), ms: ms() };
    target.entity = await entityOf(backend, job, c, resolved);
    return { ...(await entityJob(backend, job, target.entity, key, signal, started)), ms: ms() };
  } catch (err) {
    const e = err as MgptError;
    return {
      id: job.id,
      ok: false,
      ...(target.entity ? { entity: target.entity } : job.universe ? { universe: job.universe } : {}),
      error: { message: e?.message ?? String(err), ...(e?.status ? { status: e.status } : {}), exitCode: exitCodeOf(err) },
      ms: ms(),
    };
  }
}

async function universeJob(backend: Backend, job: BatchJob, key: string, signal: AbortSignal): Promise<Omit<BatchResult & { ok: true }, 'ms'>> {
  const res = await backend.respond({ model: job.model ?? UNIVERSE_MODEL, universe: job.universe, userInput: job.input, requestId: key }, { signal });
  const u = res.usageSettlement;
  return {
    id: job.id,
    ok: true,
    universe: job.universe,
    reply: res.assistantRaw,
    usage: { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens },
    ...(res.toolCalls?.length ? { toolCalls: res.toolCalls } : {}),
    ...(res.diagnostics.replayed ? { replayed: true } : {}),
  };
}

/** The job's entity: resolved up front, or made by a newEntity job (once: the journal remembers it). */
async function entityOf(backend: Backend, job: BatchJob, c: JobContext, resolved: Map<string, string | MgptError>): Promise<string> {
  if (job.entity) {
    const r = resolved.get(job.entity)!;
    if (r instanceof MgptError) throw r;
    return r;
  }
  const known = c.journal.entity(job.id);
  if (known) return known;
  const n = job.newEntity!;
  const create = async () => (await backend.createEntity({ model: n.model ?? ENTITY_MODEL, name: n.name, instructions: n.instructions })).id;
  // A name repeated in the file is one entity: the first job makes it, the later ones reuse it.
  let id: Promise<string>;
  if (!n.name) id = create();
  else {
    const made = c.made.get(n.name);
    id = made ?? create();
    if (!made) {
      c.made.set(n.name, id);
      // A failed create is not remembered: the next job of the name tries again.
      id.catch(() => c.made.delete(n.name!));
    }
  }
  const entity = await id;
  await c.journal.addEntity(job.id, entity);
  return entity;
}

async function entityJob(backend: Backend, job: BatchJob, entity: string, key: string, signal: AbortSignal, started: number): Promise<Omit<BatchResult & { ok: true }, 'ms'>> {
  let completion: EntityCompletion | undefined;
  let replayed = false;
  // A busy entity (another writer, or the lease of a run that was killed) frees itself within
  // the lease TTL; the idempotency key makes the retry safe.
  for (let wait = 250; ; wait = Math.min(wait * 2, 2000)) {
    try {
      for await (const ev of backend.sendMessage(entity, { content: job.input, idempotencyKey: key, signal, buffered: true, ...(job.at !== undefined ? { at: job.at } : {}) })) {
        if (ev.type !== 'done') continue;
        completion = ev.completion;
        replayed = ev.replayed;
      }
      break;
    } catch (err) {
      if (!isBusy(err) || signal.aborted || performance.now() - started + wait > BUSY_WAIT_MS) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  if (!completion) throw new MgptError('the turn ended without a reply');
  return { id: job.id, ok: true, entity, reply: completion.choices[0]?.message.content ?? '', usage: completion.usage, ...(replayed ? { replayed: true } : {}) };
}
