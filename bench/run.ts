// npm run bench: measures the targets of the issues and prints a table; writes bench/results/*.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openEngineSync } from '../src/engine/open-engine.js';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { type BranchRun, benchBranch } from './branch.js';
import { benchBatch, benchChat } from './chat-batch.js';
import { benchGguf, benchLlama } from './llama.js';
import { benchServe, benchServeReplicas } from './serve.js';
import { benchSenders } from './senders.js';
import { sqlTurnsPerSecond } from './sql-floor.js';
import { seedTranscript } from './seed.js';
import { benchTokens } from './tokens.js';
import { benchRotationCost } from './rotation-cache.js';
import { benchServeLlama } from './serve-llama.js';
import { CAPACITY_P99_MS, type CapacityRun, type CapacityStep, SIDE_CLIENTS, benchCapacity } from './capacity.js';
import { benchResponsesChain, benchResponsesFloor } from './responses.js';
import { benchSseWriter } from './sse-writer.js';
import { benchSharedContext } from './shared-context.js';
import { benchIndexCost, benchSearch } from './search.js';
import { benchSearchLoad } from './search-load.js';
import { type LimitRuns, type LoadRun, benchLimits } from './limits.js';
import { type MemoryRun, benchMemory } from './memory.js';
import { WINDOW_REALISTIC, benchRealistic } from './memory-realistic.js';
import { benchRepl } from './repl.js';
import { consoleLoadMs, consoleWeightKb } from './console.js';
import { benchHistory } from './history.js';
import { benchImport } from './import.js';
import { benchImportLoad, idleHealthz } from './import-load.js';
import { benchMcp } from './mcp.js';
import { benchImportNaming } from './import-names.js';
import { benchSemantic } from './semantic.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'mgpt');
const work = mkdtempSync(join(tmpdir(), 'mgpt-bench-'));
const quick = process.argv.includes('--quick');
// `--only=turns,window,serve` runs just those sections (startup, turns, window, export, serve, branch, chat, repl, senders, llama, tokens, rotation, rotation-cache, serve-llama, responses, sse-writer, shared, search, limits, capacity, memory, console, history, import, mcp, semantic).
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const section = (name: string) => !only || only.includes(name);

interface Row {
  name: string;
  value: number;
  unit: string;
  target?: string;
  met?: boolean;
  note?: string;
}
const rows: Row[] = [];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function wall(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

/** From spawning the command to the first byte on its stdout; the command must then exit 0. */
function firstByte(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let at = 0;
    let err = '';
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', () => (at ||= performance.now() - t0));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 && at ? resolve(at) : reject(new Error(`${cmd} ${args.join(' ')} failed: ${err}`))));
  });
}

function newEngine(db: string, windowBudget?: number) {
  return openEngineSync({ db, windowBudget });
}

// 1. Startup, measured against bare node in the same run, interleaved so load noise hits both.
if (section('startup')) {
  const db = join(work, 'startup.db');
  const engine = newEngine(db);
  for (let i = 0; i < 100; i++) await engine.entities.create({ model: 'mgpt-1-27b', name: `entity ${i}` }, 'local');
  await engine.close();
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, 'cfg'), NO_COLOR: '1' };
  // A one-shot send with the built-in echo provider (no model configured), and one to an
  // OpenAI-compatible server on loopback, timed to the first byte of the reply on stdout.
  const sendDb = join(work, 'send.db');
  const sendEngine = newEngine(sendDb);
  const echoEntity = (await sendEngine.entities.create({ model: 'mgpt-1-27b', name: 'echo' }, 'local')).id;
  const realEntity = (await sendEngine.entities.create({ model: 'mgpt-1-27b', name: 'real' }, 'local')).id;
  sendEngine.close();
  const fake = await startFakeOpenAI();
  const sendEnv = { ...env, MGPT_DB: sendDb };
  const realEnv = { ...sendEnv, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url };
  const runs = quick ? 7 : 25;
  const node: number[] = [];
  const version: number[] = [];
  const list: number[] = [];
  const send: number[] = [];
  const nodeFirstByte: number[] = [];
  const realFirstByte: number[] = [];
  for (let i = 0; i < 3; i++) wall(process.execPath, [bin, 'entities', 'list', '--json'], env); // warm the page cache
  for (let i = 0; i < 3; i++) wall(process.execPath, [bin, 'send', echoEntity, 'hi'], sendEnv);
  for (let i = 0; i < runs; i++) {
    node.push(wall(process.execPath, ['-e', '0'], env));
    version.push(wall(process.execPath, [bin, '--version'], env));
    list.push(wall(process.execPath, [bin, 'entities', 'list', '--json'], env));
    send.push(wall(process.execPath, [bin, 'send', echoEntity, 'hi'], sendEnv));
    nodeFirstByte.push(await firstByte(process.execPath, ['-e', "process.stdout.write('x')"], env));
    realFirstByte.push(await firstByte(process.execPath, [bin, 'send', realEntity, 'hi'], realEnv));
  }
  await fake.close();
  const base = median(node);
  rows.push({ name: 'node -e 0 (baseline)', value: base, unit: 'ms' });
  rows.push({ name: 'mgpt --version', value: median(version), unit: 'ms' });
  rows.push({ name: 'mgpt --version / node', value: median(version) / base, unit: 'x', target: '<= 1.3', met: median(version) / base <= 1.3 });
  rows.push({ name: 'mgpt entities list --json (100)', value: median(list), unit: 'ms' });
  rows.push({ name: 'entities list / node', value: median(list) / base, unit: 'x', target: '<= 1.6', met: median(list) / base <= 1.6 });
  rows.push({ name: 'mgpt send ENTITY hi (echo)', value: median(send), unit: 'ms' });
  rows.push({ name: 'send (echo) / node', value: median(send) / base, unit: 'x', target: '<= 2.0', met: median(send) / base <= 2.0 });
  const fb = median(realFirstByte) / median(nodeFirstByte);
  rows.push({ name: 'send first reply byte, loopback provider', value: median(realFirstByte), unit: 'ms', note: `node's first byte ${median(nodeFirstByte).toFixed(0)} ms` });
  rows.push({ name: 'send first byte / node first byte', value: fb, unit: 'x', target: '<= 1.5', met: fb <= 1.5 });
}

// 2. Engine turn overhead with the echo provider, at 100 and at 20,000 transcript messages.
async function turnOverhead(messages: number): Promise<number[]> {
  const engine = newEngine(join(work, `turns-${messages}.db`));
  const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a benchmark.' }, 'local');
  await seedTranscript(engine, e.id, messages, 40); // 20k x 40 = 800k tokens, under the 1M cap
  const times: number[] = [];
  const turns = quick ? 100 : 300;
  for (let i = 0; i < turns + 20; i++) {
    const t0 = performance.now();
    for await (const _ of engine.entities.send(e.id, { content: `turn ${i}: how are the tomatoes doing this week?` }, 'local'));
    if (i >= 20) times.push(performance.now() - t0); // the first turns warm the JIT and the tokenizer
  }
  await engine.close();
  return times;
}
let engineTurnMs = NaN;
if (section('turns') || section('serve')) {
  const small = await turnOverhead(100);
  engineTurnMs = median(small);
  const large = await turnOverhead(20_000);
  rows.push({ name: 'turn overhead @100 msgs (median)', value: median(small), unit: 'ms', target: '<= 2', met: median(small) <= 2, note: `p95 ${pct(small, 0.95).toFixed(2)} ms` });
  rows.push({ name: 'turn overhead @20k msgs (median)', value: median(large), unit: 'ms', target: '<= 2', met: median(large) <= 2, note: `p95 ${pct(large, 0.95).toFixed(2)} ms` });
  const ratio = median(large) / median(small);
  rows.push({ name: 'turn @20k / turn @100', value: ratio, unit: 'x', target: '<= 1.2', met: ratio <= 1.2 });
}

// 2a. What automatic recall adds to a turn (issue 32): two entities with the same 20,000-message
// transcript in one engine, one with recall off and one with `auto`, their turns interleaved so load
// noise hits both. The question is about a fact planted every 400th message (50 of them, the
// rest of the transcript four lines over and over), so every turn recalls.
if (section('turns')) {
  const r = await recallOverhead(20_000);
  const added = median(r.auto) - median(r.off);
  rows.push({ name: 'turn @20k msgs, recall off (median)', value: median(r.off), unit: 'ms', note: `p95 ${pct(r.off, 0.95).toFixed(2)} ms` });
  rows.push({ name: 'turn @20k msgs, recall auto (median)', value: median(r.auto), unit: 'ms', note: `p95 ${pct(r.auto, 0.95).toFixed(2)} ms; ${r.recalled.toFixed(1)} messages recalled a turn on average` });
  rows.push({ name: 'recall auto adds to a turn @20k msgs', value: added, unit: 'ms', target: '<= 2', met: added <= 2 });
}

async function recallOverhead(messages: number): Promise<{ off: number[]; auto: number[]; recalled: number }> {
  const engine = newEngine(join(work, `recall-${messages}.db`));
  const off = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a benchmark.', recall: 'off' }, 'local');
  const auto = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a benchmark.', recall: 'auto' }, 'local');
  // Every 400th message a fact a question asks about: 50 of them, so auto has something to recall.
  const plant = { every: 400, line: 'The blue heron nested by the old mill again this spring' };
  await seedTranscript(engine, off.id, messages, 40, 20, plant);
  await seedTranscript(engine, auto.id, messages, 40, 20, plant);
  const out = { off: [] as number[], auto: [] as number[], recalled: 0 };
  const turns = quick ? 100 : 300;
  for (let i = 0; i < turns + 20; i++) {
    for (const [id, into] of [[off.id, out.off], [auto.id, out.auto]] as const) {
      const t0 = performance.now();
      for await (const part of engine.entities.send(id, { content: `turn ${i}: where did that heron build its nest?` }, 'local')) {
        if (part.type === 'done' && id === auto.id && i >= 20) out.recalled += (part.completion.recalled?.length ?? 0) / turns;
      }
      if (i >= 20) into.push(performance.now() - t0);
    }
  }
  await engine.close();
  return out;
}

// 2b. Turn overhead flat in window size: an 8,000-block window against an empty one, turns interleaved.
if (section('window')) {
  const w = await windowFlatness();
  const ratio = median(w.large) / median(w.empty);
  rows.push({ name: 'turn, empty window (median)', value: median(w.empty), unit: 'ms', note: `p95 ${pct(w.empty, 0.95).toFixed(2)} ms` });
  rows.push({ name: 'turn, 8,000-block window (median)', value: median(w.large), unit: 'ms', note: `p95 ${pct(w.large, 0.95).toFixed(2)} ms` });
  rows.push({ name: 'turn @8k blocks / turn @empty window', value: ratio, unit: 'x', target: '<= 1.2', met: ratio <= 1.2 });
}

/** Two entities in one engine, one with no window and one with 8,000 blocks; their turns alternate so load noise hits both. */
async function windowFlatness(): Promise<{ empty: number[]; large: number[] }> {
  const engine = newEngine(join(work, 'window.db'), 1_000_000);
  const empty = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
  const large = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
  await seedTranscript(engine, large.id, 8000, 8, 8000);
  const out = { empty: [] as number[], large: [] as number[] };
  const turns = quick ? 100 : 300;
  for (let i = 0; i < turns + 20; i++) {
    for (const [id, into] of [[empty.id, out.empty], [large.id, out.large]] as const) {
      const t0 = performance.now();
      for await (const _ of engine.entities.send(id, { content: `turn ${i}: how are the tomatoes doing this week?` }, 'local'));
      if (i >= 20) into.push(performance.now() - t0);
    }
  }
  await engine.close();
  return out;
}

// 3. Export of a 1M-token transcript: time and peak memory growth, in a child process.
if (section('export')) {
  const db = join(work, 'export.db');
  const engine = newEngine(db);
  const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
  const { transcriptTokens } = await seedTranscript(engine, e.id, 5000, 200);
  await engine.close();
  for (const format of ['tar', 'json'] as const) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'export-child.ts'), db, e.id, format, join(work, `out.${format}`)], {
      cwd: root,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`export child failed: ${r.stderr}`);
    const m = JSON.parse(r.stdout) as { ms: number; bytes: number; growth: number };
    const mb = m.growth / 1024 / 1024;
    rows.push({ name: `export ${format}, ${(transcriptTokens / 1e6).toFixed(2)}M tokens`, value: m.ms, unit: 'ms', target: '<= 1000', met: m.ms <= 1000, note: `${(m.bytes / 1e6).toFixed(1)} MB written` });
    rows.push({ name: `export ${format} peak memory growth`, value: mb, unit: 'MB', target: '< 50', met: mb < 50 });
  }
}

// 4. mgpt serve: buffered and SSE messages per second against bare node:http, and first-token latency.
if (section('serve')) {
  const s = await benchServe(root, work, quick);
  rows.push({ name: 'serve buffered msgs/s (echo)', value: s.serveRps, unit: '/s', note: `bare node:http ${s.bareRps.toFixed(0)}/s` });
  rows.push({ name: 'serve server CPU per buffered turn', value: s.cpuPerTurnUs, unit: 'µs', note: `bare node:http ${s.bareCpuPerTurnUs.toFixed(0)} µs a request` });
  rows.push({ name: 'serve SSE msgs/s (echo)', value: s.sseRps, unit: '/s', note: `server CPU ${s.sseCpuPerTurnUs.toFixed(0)} µs a turn` });
  rows.push({ name: 'serve SSE msgs/s / bare node:http', value: s.sseRatio, unit: 'x', target: '>= 0.25', met: s.sseRatio >= 0.25 });
  // The most any HTTP layer could reach: the engine's own turns per second, one at a time, no HTTP.
  const ceiling = 1000 / engineTurnMs;
  rows.push({ name: 'engine turns/s in-process / bare', value: ceiling / s.bareRps, unit: 'x', note: `${ceiling.toFixed(0)} turns/s: the ceiling for serve` });
  rows.push({ name: 'serve msgs/s / bare node:http', value: s.ratio, unit: 'x', target: '>= 0.3', met: s.ratio >= 0.3 });
  // The floor: a turn's SQL alone (same statements and transactions), in-process and behind bare node:http.
  const sqlAlone = await sqlTurnsPerSecond(join(work, 'floor-inproc.db'), quick ? 2 : 5);
  rows.push({ name: 'floor: turn SQL alone in-process / bare', value: sqlAlone / s.bareRps, unit: 'x', note: `${sqlAlone.toFixed(0)} turns/s, one at a time` });
  rows.push({
    name: 'floor: bare node:http + turn SQL / bare',
    value: s.floorRps / s.bareRps,
    unit: 'x',
    note: `${s.floorRps.toFixed(0)}/s, server CPU ${s.floorCpuPerTurnUs.toFixed(0)} µs a turn`,
  });
  rows.push({ name: 'serve first-token latency added', value: s.firstTokenAddedMs, unit: 'ms', target: '<= 5', met: s.firstTokenAddedMs <= 5, note: `p95 ${s.firstTokenP95Ms.toFixed(2)} ms` });
  const facadeExtra = s.facadeFirstTokenAddedMs - s.firstTokenAddedMs;
  rows.push({
    name: 'facade first-token minus entity route',
    value: facadeExtra,
    unit: 'ms',
    target: '<= 1',
    met: facadeExtra <= 1,
    note: `/v1/chat/completions ${s.facadeFirstTokenAddedMs.toFixed(2)} ms added (p95 ${s.facadeFirstTokenP95Ms.toFixed(2)})`,
  });
}

// 4a. 8 clients branching an entity with a 25,000-message history each, while /healthz is pinged.
if (section('branch')) {
  const b = await benchBranch(root, work);
  const worst = (r: BranchRun) => Math.max(...r.healthMs);
  const about = (r: BranchRun) =>
    `p50 ${median(r.healthMs).toFixed(1)} ms of ${r.healthMs.length} pings; done in ${(r.totalMs / 1000).toFixed(1)} s; peak RSS ${r.peakRssMb.toFixed(0)} MB`;
  rows.push({ name: '/healthz during 1 x 25k-message branch, max', value: worst(b.one), unit: 'ms', target: '<= 250', met: worst(b.one) <= 250, note: about(b.one) });
  rows.push({ name: '/healthz during 8 x 25k-message branches, max', value: worst(b.eight), unit: 'ms', target: '<= 250', met: worst(b.eight) <= 250, note: about(b.eight) });
  rows.push({ name: 'server peak RSS during 8 x 25k-message branches', value: b.eight.peakRssMb, unit: 'MB', note: `idle ${b.idle.peakRssMb.toFixed(0)} MB` });
  rows.push({ name: 'floor: same 8 bodies answered stateless, max', value: worst(b.eightRefused), unit: 'ms', note: `${about(b.eightRefused)}; idle p50 ${median(b.idle.healthMs).toFixed(1)} ms` });
}

// 4b. mgpt serve on PostgreSQL: one replica and two on one database, against SQLite in the same run.
if (section('replicas')) {
  const r = await benchServeReplicas(root, work, quick);
  if (!r) {
    console.warn('serve on PostgreSQL: PostgreSQL could not be started: its rows were not measured');
  } else {
    rows.push({ name: 'serve msgs/s, SQLite (same run)', value: r.sqliteRps, unit: '/s', note: '1 process' });
    rows.push({ name: 'serve msgs/s, PostgreSQL, 1 replica', value: r.pgOneRps, unit: '/s', note: `${(r.pgOneRps / r.sqliteRps).toFixed(2)}x SQLite` });
    rows.push({ name: 'serve msgs/s, PostgreSQL, 2 replicas', value: r.pgTwoRps, unit: '/s', note: `${(r.pgTwoRps / r.pgOneRps).toFixed(2)}x 1 replica; each request to the other replica` });
    const gain = r.pgTwoStickyRps / r.pgOneRps;
    rows.push({ name: 'serve msgs/s, PostgreSQL, 2 sticky', value: r.pgTwoStickyRps, unit: '/s', note: 'each entity on one replica (affinity)' });
    rows.push({ name: 'PostgreSQL 2 sticky replicas / 1', value: gain, unit: 'x', target: '> 1', met: gain > 1 });
  }
}

// 4c. Rate limits under load: 200 clients on 4 keys at twice their limits for 20 s, one process and two replicas.
if (section('limits')) {
  const l = await benchLimits(root, work, quick);
  const report = (what: string, r: LimitRuns) => {
    const share = r.limited.refused / r.limited.offered;
    const expected = 1 - r.limited.allowed / r.limited.offered;
    const admitted = r.limited.admitted / r.limited.allowed;
    const counts = (x: LoadRun) =>
      `${x.offered} offered, ${x.admitted} admitted, ${x.refused} refused, ${x.server5xx} 5xx, ${x.other} other in ${x.seconds.toFixed(1)} s${x.firstFailure ? ` (first: ${x.firstFailure})` : ''}`;
    rows.push({ name: `limits ${what}: admitted / allowed`, value: admitted, unit: 'x', target: '0.95-1.05', met: admitted >= 0.95 && admitted <= 1.05, note: `429 share ${(share * 100).toFixed(1)}% (limits allow ${(expected * 100).toFixed(1)}%); ${counts(r.limited)}` });
    const errors = r.limited.server5xx + r.unlimited.server5xx;
    rows.push({ name: `limits ${what}: 5xx answers`, value: errors, unit: '', target: '0', met: errors === 0, note: `unlimited run: ${counts(r.unlimited)}` });
    const cpu = r.limited.cpuPerTurnUs / r.unlimited.cpuPerTurnUs;
    rows.push({ name: `limits ${what}: CPU per admitted turn / unlimited`, value: cpu, unit: 'x', target: '<= 1.1', met: cpu <= 1.1, note: `${r.limited.cpuPerTurnUs.toFixed(0)} µs vs ${r.unlimited.cpuPerTurnUs.toFixed(0)} µs` });
    const floor = r.floor.cpuPerTurnUs / r.unlimited.cpuPerTurnUs;
    rows.push({ name: `floor ${what}: excess answered 404, no limiter / unlimited`, value: floor, unit: 'x', note: `${r.floor.cpuPerTurnUs.toFixed(0)} µs; limited / floor ${(r.limited.cpuPerTurnUs / r.floor.cpuPerTurnUs).toFixed(2)}x; ${counts(r.floor)}` });
  };
  report('1 process (SQLite)', l.one);
  if (l.two) report('2 replicas (PostgreSQL)', l.two);
  else console.warn('rate limits on PostgreSQL: PostgreSQL could not be started: its rows were not measured');
}

// 4d. Capacity: closed-loop clients ramping until p99 passes 250 ms, on SQLite and on 1, 2 and 4 replicas of one PostgreSQL.
// MGPT_BENCH_BASELINE=<a tree>/bin/mgpt also ramps that build on PostgreSQL, right before this one, for a before/after in one run.
if (section('capacity')) {
  const c = await benchCapacity(root, work, quick, process.env.MGPT_BENCH_BASELINE);
  if (!c) {
    console.warn('capacity: PostgreSQL could not be started: its rows were not measured');
  } else {
    const report = (r: CapacityRun) => {
      const s = r.atLimit;
      const ramp = r.steps.map((x) => `${x.clients}: ${x.turnsPerSecond.toFixed(0)}/s p99 ${x.p99Ms.toFixed(0)}${x.failures ? ` (${x.failures} failed)` : ''}`).join(', ');
      const cpu = `database CPU ${(s.dbCpuShare * 100).toFixed(0)}% of the cores (${s.dbCpuPerTurnUs.toFixed(0)} µs a turn), serve ${(s.serveCpuShare * 100).toFixed(0)}% (${s.serveCpuPerTurnUs.toFixed(0)} µs)`;
      const stmts = Number.isNaN(r.statementsPerTurn) ? '' : `; ${r.statementsPerTurn.toFixed(1)} statements and ${r.dbMsPerTurn.toFixed(2)} ms of execution a turn; hottest ${(r.hottest!.share * 100).toFixed(0)}% of the time, ${r.hottest!.perTurn.toFixed(2)} a turn: ${r.hottest!.query.slice(0, 70)}`;
      rows.push({ name: `capacity ${r.label}: turns/s at p99 <= ${CAPACITY_P99_MS} ms`, value: s.turnsPerSecond, unit: '/s', note: `${s.clients} clients, p99 ${s.p99Ms.toFixed(0)} ms${r.passed ? '' : ' (never passed the bound)'}; ${cpu}${stmts}; ramp ${ramp}` });
    };
    c.runs.forEach(report);
    c.baseline.forEach(report);
    const side = new Map(c.sideBySide.map((x) => [x.label, x.step]));
    const at = (s: CapacityStep) => `${s.turnsPerSecond.toFixed(0)}/s, p99 ${s.p99Ms.toFixed(0)} ms, database ${s.dbCpuPerTurnUs.toFixed(0)} µs and serve ${s.serveCpuPerTurnUs.toFixed(0)} µs of CPU a turn`;
    for (const b of c.baseline) {
      const after = c.runs.find((r) => `${r.label} (baseline)` === b.label);
      const [now, was] = [side.get(after?.label ?? ''), side.get(b.label)];
      if (after && now && was) rows.push({ name: `capacity ${after.label}: this build / baseline at ${SIDE_CLIENTS} clients`, value: now.turnsPerSecond / was.turnsPerSecond, unit: 'x', note: `${at(now)} vs ${at(was)}; ${after.statementsPerTurn.toFixed(1)} vs ${b.statementsPerTurn.toFixed(1)} statements and ${after.dbMsPerTurn.toFixed(2)} vs ${b.dbMsPerTurn.toFixed(2)} ms of execution a turn; at the limit ${after.atLimit.turnsPerSecond.toFixed(0)} vs ${b.atLimit.turnsPerSecond.toFixed(0)}/s` });
    }
    const [metered, plain] = [side.get('PostgreSQL, 2 replicas, metered account'), side.get('PostgreSQL, 2 replicas')];
    if (metered && plain) rows.push({ name: `capacity: metered account (every turn moves its balance row) / unmetered, 2 replicas at ${SIDE_CLIENTS} clients`, value: metered.turnsPerSecond / plain.turnsPerSecond, unit: 'x', note: `${at(metered)} vs ${at(plain)}` });
    for (const r of [...c.runs, ...c.baseline].filter((x) => x.top.length)) {
      console.log(`\n${r.label}: top statements by time\n${r.top.map((t) => `  ${(t.share * 100).toFixed(1)}%  ${t.perTurn.toFixed(2)}/turn  ${t.query}`).join('\n')}`);
      console.log(`  writes to rows shared across entities: ${r.shared.map((t) => `${t.perTurn.toFixed(2)}/turn ${t.query.slice(0, 60)}`).join('; ') || 'none on their own (in the turn statement)'}`);
    }
  }
}

// 5. mgpt chat: time to the first prompt; mgpt batch: 200 and 2,000 jobs at 100 ms each, 16 at a time.
if (section('chat')) {
  const c = await benchChat(root, work, quick);
  rows.push({ name: 'chat: time to first prompt (median)', value: median(c.firstPromptMs), unit: 'ms', target: '<= 500', met: median(c.firstPromptMs) <= 500, note: `max ${Math.max(...c.firstPromptMs).toFixed(0)} ms, in a pty` });
  for (const [n, target] of [[200, 1.25], [2000, 1.05]] as const) {
    if (quick && n > 200) continue;
    // The median of three runs at N=200 (1.25 s each): one run swings with the machine's load.
    const all = [];
    for (let i = 0; i < (n > 200 ? 1 : 3); i++) all.push(await benchBatch(root, work, n));
    const b = all.sort((x, y) => x.batchMs - y.batchMs)[(all.length - 1) >> 1];
    const r = b.batchMs / b.batchIdealMs;
    rows.push({ name: `batch ${n} jobs, 100 ms, c=16 / ideal`, value: r, unit: 'x', target: `<= ${target}`, met: r <= target, note: `${b.batchMs.toFixed(0)} ms wall vs ${b.batchIdealMs.toFixed(0)} ms ideal${all.length > 1 ? `; median of ${all.length}` : ''}` });
    rows.push({ name: `batch ${n} job phase / ideal (no startup)`, value: b.batchJobsMs / b.batchIdealMs, unit: 'x', note: `${b.batchJobsMs.toFixed(0)} ms from the first job to the last` });
  }
}

// 5a. mgpt chat streaming a 2,000-token reply in a pty: the REPL's CPU against send printing the
// same stream (its startup, a one-token send, taken off), and Ctrl-C to the cancel notice under a burner.
if (section('repl')) {
  const r = await benchRepl(root, work, quick);
  const repl = median(r.replCpuMs);
  const send = median(r.sendCpuMs);
  const stream = send - median(r.sendIdleCpuMs);
  const ratio = repl / stream;
  const runs = `median of ${r.replCpuMs.length}`;
  rows.push({ name: `repl: CPU for a ${r.tokens}-token streamed reply`, value: repl, unit: 'ms', note: `${runs}; REPL process, Enter to the status line after the reply` });
  rows.push({ name: `floor: send printing it, startup taken off`, value: stream, unit: 'ms', note: `whole send ${send.toFixed(0)} ms, one-token send ${median(r.sendIdleCpuMs).toFixed(0)} ms; ${runs}` });
  rows.push({ name: 'repl reply CPU / send', value: ratio, unit: 'x', target: '<= 2', met: ratio <= 2, note: `whole send process: ${(repl / send).toFixed(2)}x` });
  const cancel = median(r.cancelMs);
  rows.push({ name: `repl: Ctrl-C to cancel notice${r.burner ? ', stress-ng --cpu 2' : ', no burner'}`, value: cancel, unit: 'ms', target: '<= 200', met: Math.max(...r.cancelMs) <= 200, note: `max ${Math.max(...r.cancelMs).toFixed(0)} ms; ${runs}` });
}

// 5b. 50 CLI senders at once on 50 different entities, every reply 400 ms late: no false conflicts.
if (section('senders')) {
  const s = await benchSenders(root, work, { senders: 50, turns: quick ? 2 : 6, latencyMs: 400 });
  rows.push({
    name: `50 senders on 50 entities: false conflicts`,
    value: s.falseConflicts,
    unit: 'n',
    target: '0',
    met: s.falseConflicts === 0,
    note: `of ${s.turns} turns; ${s.otherFailures} other failures; ${(s.wallMs / 1000).toFixed(1)} s${s.firstError ? `; first: ${s.firstError}` : ''}`,
  });
}

// 6. The llama provider on the tiny real model: tokens/s through the engine vs node-llama-cpp directly.
if (section('llama')) {
  const gguf = benchGguf(root);
  if (!gguf) {
    console.warn('llama: no stories260K.gguf (set MGPT_TEST_GGUF): its rows were not measured');
  } else {
    const l = await benchLlama(gguf, work, quick);
    rows.push({ name: 'llama tokens/s via the engine', value: l.engineTps, unit: '/s', note: `${l.tokens} tokens a turn, 1 thread` });
    rows.push({ name: 'llama engine / node-llama-cpp direct', value: l.ratio, unit: 'x', target: '>= 0.9', met: l.ratio >= 0.9, note: `direct ${l.directTps.toFixed(0)} tokens/s; median of paired runs` });
  }
}

// 7. Token counting: a run of one letter is no slower than prose, and prose no slower than o200k.
if (section('tokens')) {
  const t = await benchTokens(root, quick);
  const run = t.letterRunMs / t.proseMs;
  const prose = t.proseMs / t.proseUnsplitMs;
  rows.push({ name: 'count 400k chars of prose (median)', value: t.proseMs, unit: 'ms', note: `o200k unsplit ${t.proseUnsplitMs.toFixed(1)} ms` });
  rows.push({ name: 'count prose / o200k unsplit', value: prose, unit: 'x', target: '<= 1.1', met: prose <= 1.1 });
  rows.push({ name: 'count 400k one-letter run / prose', value: run, unit: 'x', target: '<= 2', met: run <= 2, note: `${t.letterRunMs.toFixed(1)} ms` });
  rows.push({ name: 'count 400k random-letter run / prose', value: t.randomRunMs / t.proseMs, unit: 'x', note: `${t.randomRunMs.toFixed(0)} ms: linear, but no merge is cached` });
}

// 8. Rotation against the real llama-server: what a long conversation makes the server process,
// from its own timings (issue 21). 200 turns on one entity, the default budget, nothing configured.
// The ratio is the prompt tokens processed a turn over the conversation's own growth a turn (what a
// client resending the whole history would add): recall that stays in place keeps it low (issue 42).
if (section('rotation') || section('rotation-cache')) {
  const targets = { off: { ratio: 1.68, reuse: 86 }, auto: { ratio: 2.0, reuse: 80 } } as const;
  for (const [context, recall] of [[2048, 'off'], [2048, 'auto'], [8192, 'off']] as const) {
    if ((quick || section('rotation-cache')) && context > 2048) continue;
    const r = await benchRotationCost(work, context, quick ? 100 : 200, {}, recall);
    if (!r) {
      console.warn('rotation: no llama-server (MGPT_TEST_LLAMA_SERVER) or model (MGPT_TEST_GGUF): its rows were not measured');
      break;
    }
    const ratio = r.processedPerTurn / r.growthPerTurn;
    const at = `@${context}${recall === 'auto' ? ', recall auto' : ''}`;
    const t = context === 2048 ? targets[recall] : undefined;
    if (recall === 'auto') rows.push({ name: `rotation ${at}: recalled tokens a turn`, value: r.recalledPerTurn, unit: 'n' });
    rows.push({
      name: `rotation ${at}: processed / growth prompt tokens`, value: ratio, unit: 'x', ...(t ? { target: `<= ${t.ratio}`, met: ratio <= t.ratio } : {}),
      note: `${r.processedPerTurn.toFixed(0)} processed vs ${r.growthPerTurn.toFixed(0)} grown a turn; ${r.turns} turns, ${r.failures} failed, ${r.refused} refused (the context is learned from one)`,
    });
    const summaries = context === 2048 ? { target: '<= 15', met: r.summariesPer100 <= 15 } : {};
    rows.push({ name: `rotation ${at}: summary calls per 100 turns`, value: r.summariesPer100, unit: 'n', ...summaries, note: `summaries took ${(r.summaryShare * 100).toFixed(0)}% of the tokens processed` });
    rows.push({ name: `rotation ${at}: prompt tokens from the cache`, value: r.cacheReuse * 100, unit: '%', ...(t ? { target: `>= ${t.reuse}`, met: r.cacheReuse * 100 >= t.reuse } : {}) });
  }
}

// 9. What serve adds to a buffered completion against the real llama-server (interleaved medians).
if (section('serve-llama')) {
  const r = await benchServeLlama(root, work, quick ? 15 : 40);
  if (!r) {
    console.warn('serve-llama: no llama-server (MGPT_TEST_LLAMA_SERVER) or model (MGPT_TEST_GGUF): its rows were not measured');
  } else {
    rows.push({ name: 'serve: buffered completion vs llama-server direct, added', value: r.addedMs, unit: 'ms', target: '<= 2', met: r.addedMs <= 2, note: `${r.serveMs.toFixed(1)} vs ${r.directMs.toFixed(1)} ms` });
    rows.push({ name: 'the same to the scripted fake, added', value: r.fakeAddedMs, unit: 'ms', note: "serve's own work a request, no model server beside it" });
    rows.push({ name: 'floor: a bare node:http process that only forwards it, added', value: r.proxyAddedMs, unit: 'ms', note: `serve's own share: ${(r.addedMs - r.proxyAddedMs).toFixed(2)} ms` });
  }
}

// 9b. The Responses API: serve's own work a stored response over the floor, and a 100-response chain's tokens on llama-server against an entity's.
if (section('responses')) {
  const f = await benchResponsesFloor(root, work, quick ? 15 : 40);
  rows.push({ name: 'responses: a stored response (previous_response_id) vs the fake direct, added', value: f.addedMs, unit: 'ms', note: `${f.serveMs.toFixed(1)} vs ${f.directMs.toFixed(1)} ms` });
  rows.push({ name: 'responses: floor, a bare node:http process that only forwards it, added', value: f.proxyAddedMs, unit: 'ms', note: `serve's own share: ${(f.addedMs - f.proxyAddedMs).toFixed(2)} ms` });
  const c = await benchResponsesChain(root, work, 100);
  if (!c) {
    console.warn('responses: no llama-server (MGPT_TEST_LLAMA_SERVER) or model (MGPT_TEST_GGUF): the chain rows were not measured');
  } else {
    rows.push({ name: 'responses: 100-response chain, prompt tokens processed a turn', value: c.processedPerTurn, unit: 'tok', note: `an entity's: ${c.entityProcessedPerTurn.toFixed(0)}` });
    rows.push({ name: 'responses: 100-response chain, new prompt tokens a turn', value: c.newPerTurn, unit: 'tok', target: "= entity's", met: c.newPerTurn === c.entityNewPerTurn, note: `an entity's: ${c.entityNewPerTurn}; failures ${c.failures}` });
  }
}

// 9a. The SSE writer: server CPU a streamed reply, written to node's response (src/server/sse.ts) or through hono/streaming.
if (section('sse-writer')) {
  for (const frames of [16, 200]) {
    const r = await benchSseWriter(root, frames, quick ? 100 : frames > 100 ? 300 : 1000);
    rows.push({ name: `sse writer, ${frames} frames: Hono stream() / direct`, value: r.stream / r.direct, unit: 'x', note: `${r.direct.toFixed(0)} µs direct, ${r.stream.toFixed(0)} µs stream(), ${r.sse.toFixed(0)} µs streamSSE() a reply` });
  }
}

// 9b. Turns on a context llama-server shares between parallel requests (-c 2048, its default
// slots): what the shared-context gate lets run at once, and what replies use of the room it holds;
// against the same turns with a context of its own per slot (-np 4: 512 tokens each) and with every
// turn planned for the whole shared context (sharedSlots 1: how turns were planned before shares).
if (section('shared')) {
  const separate = await benchSharedContext(work, ['-c', '2048', '-np', '4']);
  // The same work as on a share: replies bounded to the reply room a 512-token share plans (its quarter).
  const bounded = separate && (await benchSharedContext(work, ['-c', '2048', '-np', '4'], { maxTokens: 128 }));
  const whole = bounded && (await benchSharedContext(work, ['-c', '2048'], { sharedSlots: 1 }));
  const r = whole && (await benchSharedContext(work));
  if (!separate || !bounded || !whole || !r) {
    console.warn('shared: no llama-server (MGPT_TEST_LLAMA_SERVER) or model (MGPT_TEST_GGUF): its rows were not measured');
  } else {
    const ok = (b: typeof r) => `${b.turns - b.failed} of ${b.turns}, ${b.outOfOrder} entities out of order; turns planned for ${b.turnContext ?? '?'} tokens${b.slots > 1 ? ` (a share of ${b.slots})` : ''}; ${b.busyMean.toFixed(1)} slots busy, turn p50 ${(b.turnP50Ms / 1000).toFixed(1)} s; replies p50 ${b.replyP50}, max ${b.replyMax}`;
    rows.push({ name: 'shared context: 8 x 10 buffered turns, -np 4 (a 512-token context per slot), wall', value: separate.wallMs / 1000, unit: 's', note: ok(separate) });
    rows.push({ name: 'shared context: the same, replies bounded as on a 512-token share (maxTokens 128), wall', value: bounded.wallMs / 1000, unit: 's', note: ok(bounded) });
    rows.push({ name: 'shared context: the same on -c 2048 shared, every turn planned for all of it (sharedSlots 1), wall', value: whole.wallMs / 1000, unit: 's', note: ok(whole) });
    rows.push({ name: 'shared context: the same on -c 2048 shared, nothing configured (a share per slot), wall', value: r.wallMs / 1000, unit: 's', note: ok(r) });
    const ratio = r.wallMs / bounded.wallMs;
    const note = `against -np 4 with its replies unbounded ${(r.wallMs / separate.wallMs).toFixed(2)}x; whole-context planning ${(whole.wallMs / bounded.wallMs).toFixed(1)}x`;
    rows.push({ name: 'shared context: shared / -np 4 with the same reply bound, wall', value: ratio, unit: 'x', target: '<= 2', met: ratio <= 2 && r.failed === 0 && r.outOfOrder === 0, note });
    rows.push({ name: 'shared context: slots busy (mean while any)', value: r.busyMean, unit: 'n', note: `max ${r.busyMax} of 4` });
    rows.push({ name: 'shared context: turn, send to reply (max)', value: r.turnMaxMs / 1000, unit: 's', note: `p50 ${(r.turnP50Ms / 1000).toFixed(1)} s` });
    rows.push({ name: 'shared context: reply tokens p90 / reply bound', value: r.replyP90 / r.replyCap, unit: 'x', note: `replies p50 ${r.replyP50}, p90 ${r.replyP90}, max ${r.replyMax}; bound ${r.replyCap}; prompts p50 ${r.promptP50}` });
  }
}

// 10. Search (issue 22): latency over 1,000,000 transcript tokens in 100 entities, on both stores;
// the index's size; and what keeping it costs a turn (against the same file without it).
if (section('search')) {
  const load = await benchSearchLoad(bin, work, quick ? 3 : 10);
  const waits = `median ${load.healthzMedianMs.toFixed(1)} ms over ${load.probes} probes; 10 searches took ${load.roundMs.toFixed(0)} ms`;
  rows.push({ name: 'search: /healthz max wait during 10 worst-case searches (6 hits of 0.4 MB)', value: load.healthzMaxMs, unit: 'ms', target: '< 100', met: load.healthzMaxMs < 100, note: waits });
  rows.push({ name: 'search: /healthz median wait during them', value: load.healthzMedianMs, unit: 'ms', note: 'half a 250-prefix query, half a word in every tenth place' });
  for (const r of await benchSearch(work, quick ? 20 : 50)) {
    const at = `search (${r.store}, ${(r.tokens / 1e6).toFixed(2)}M tokens, ${r.messages} msgs)`;
    rows.push({ name: `${at}: a word (in 2% of msgs)`, value: r.wordMs, unit: 'ms', target: '<= 20', met: r.wordMs <= 20, note: `rare word ${r.rareMs.toFixed(2)} ms, phrase ${r.phraseMs.toFixed(2)} ms, prefix ${r.prefixMs.toFixed(2)} ms` });
    rows.push({ name: `${at}: a word in nearly every msg`, value: r.commonMs, unit: 'ms', note: 'the worst case: every match is ranked' });
    rows.push({ name: `search (${r.store}): index / text size`, value: r.indexBytes / r.textBytes, unit: 'x', note: `${(r.indexBytes / 1e6).toFixed(1)} MB for ${(r.textBytes / 1e6).toFixed(1)} MB of text` });
  }
  for (const messages of [100, 20_000]) {
    const c = await benchIndexCost(work, messages, quick ? 100 : 300, seedTranscript);
    const ratio = c.withIndex / c.without;
    rows.push({ name: `turn with the search index / without @${messages} msgs`, value: ratio, unit: 'x', target: '<= 1.1', met: ratio <= 1.1, note: `${c.withIndex.toFixed(2)} vs ${c.without.toFixed(2)} ms` });
  }
}

// 11. Memory (issue 32): of 109 facts planted in a 600-turn, 24-session conversation, how many a
// question worded unlike the fact brings into the prompt: window only, the recall tool, auto recall.
if (section('memory')) {
  const m = await benchMemory(work, quick);
  const share = (r: { found: number; questions: number }) => (100 * r.found) / r.questions;
  const label = (r: MemoryRun) => (r.mode === 'off' ? 'window only' : r.mode === 'tool' ? 'recall tool' : `auto, recall ${r.recallTokens}`);
  for (const r of m.runs) {
    const target = r.mode === 'auto' && r.windowBudget === 2000 && r.recallTokens === 1000 ? { target: '>= 90', met: share(r) >= 90 } : {};
    const cap = r.mode === 'tool' ? `; cap ${Math.min(1000, r.windowBudget / 5)} tokens` : '';
    const added = r.mode === 'off' ? '' : `; ${r.recalledTokens.toFixed(0)} tokens recalled a question${cap}`;
    rows.push({ name: `memory @${r.windowBudget}: ${label(r)}: evidence in prompt`, value: share(r), unit: '%', ...target, note: `${r.found} of ${r.questions}${added}` });
    if (process.env.MGPT_BENCH_TRACE) for (const f of r.missed) console.warn(`missed @${r.windowBudget} ${label(r)}: [${f.kind}] #${f.seq} ${f.question} <- ${f.fact}`);
  }
  rows.push({ name: 'floor: memory @2000: plain bm25 top hits in 1,000 tokens', value: share(m.floor), unit: '%', note: `${m.floor.found} of ${m.floor.questions}; no relative floor, partners or context` });
  console.log(`memory: ${m.facts} facts in ${m.turns} turns over ${m.sessions} sessions`);
  const r = await benchRealistic(work);
  const floorAt = (b: number) => r.floors.find((f) => f.budget === b)!;
  for (const run of r.runs) {
    const b = run.recallTokens;
    const target = b === 1000 ? { target: `>= ${share(floorAt(1000)).toFixed(0)}`, met: share(run) >= share(floorAt(1000)) } : {};
    const tokens = run.mode === 'off' ? '' : `; ${run.recalledTokens.toFixed(0)} tokens recalled a question`;
    rows.push({ name: `memory, realistic @${WINDOW_REALISTIC}: ${run.mode === 'off' ? 'window only' : `auto, recall ${b}`}: answer in prompt`, value: share(run), unit: '%', ...target, note: `${run.found} of ${run.questions}${tokens}` });
    if (process.env.MGPT_BENCH_TRACE) for (const f of run.missed) console.warn(`missed realistic ${run.mode} ${b ?? ''}: [${f.kind}] #${f.seq} ${f.question} <- ${f.fact}`);
  }
  for (const f of r.floors) {
    rows.push({ name: `floor: memory, realistic @${WINDOW_REALISTIC}: bm25 ±1 in ${f.budget} tokens`, value: share(f), unit: '%', note: `${f.found} of ${f.questions}; ${f.recalledTokens.toFixed(0)} tokens recalled a question` });
    if (process.env.MGPT_BENCH_TRACE) for (const q of f.missed) console.warn(`missed floor ${f.budget}: [${q.kind}] #${q.seq} ${q.question}`);
  }
  for (const f of r.retriever) {
    rows.push({ name: `memory, realistic @${WINDOW_REALISTIC}: retriever alone in ${f.budget} tokens`, value: share(f), unit: '%', note: `${f.found} of ${f.questions}; ${f.recalledTokens.toFixed(0)} tokens recalled a question; no in-view share` });
    if (process.env.MGPT_BENCH_TRACE) for (const q of f.missed) console.warn(`missed retriever ${f.budget}: [${q.kind}] #${q.seq} ${q.question}`);
  }
  const gain = (xs: { found: number; questions: number }[]) => share(xs[1]!) - share(xs[0]!);
  const autoGain = gain(r.runs.slice(1));
  rows.push({ name: 'memory, realistic: auto gain from 1,000 to 2,000 tokens', value: autoGain, unit: 'pts', target: `>= ${gain(r.floors).toFixed(1)}`, met: autoGain >= gain(r.floors), note: `the floor's gain is the target; auto at 1,000 left ${(100 - share(r.runs[1]!)).toFixed(0)} pts to gain; a turn's recall here is bounded by the in-view share (a tenth of the window)` });
  const retrieverGain = gain(r.retriever);
  rows.push({ name: 'memory, realistic: retriever alone, gain from 1,000 to 2,000', value: retrieverGain, unit: 'pts', target: `>= ${gain(r.floors).toFixed(1)}`, met: retrieverGain >= gain(r.floors), note: `the floor's gain is the target; ${(100 - share(r.retriever[0]!)).toFixed(0)} pts were left to gain at 1,000` });
  console.log(`memory, realistic: ${r.questions} questions on ${r.messages} messages over ${r.sessions} sessions; ${r.noiseMessages} messages in other entities`);
}

// 12. The console (issue 36): gzipped weight, and from `mgpt console`'s address to the page drawn.
if (section('console')) {
  const w = consoleWeightKb(root);
  rows.push({ name: 'console weight, gzipped', value: w.total, unit: 'KB', target: '<= 150', met: w.total <= 150, note: Object.entries(w.files).map(([f, kb]) => `${f} ${kb.toFixed(1)}`).join(', ') });
  const load = await consoleLoadMs(bin, spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).stdout.trim() || undefined, quick ? 3 : 10);
  if (load) rows.push({ name: 'mgpt console: address printed to page drawn (median)', value: median(load), unit: 'ms', target: '<= 1000', met: median(load) <= 1000, note: `max ${Math.max(...load).toFixed(0)} ms, Chromium` });
  else console.warn('bench console: no chromium on PATH, so the page load was not measured');
}

// 13. The window history (issue 33): its share of the database at 10,000 turns, and window --at.
if (section('history')) {
  const h = await benchHistory(work, quick ? 2_000 : 10_000, 200);
  const added = (100 * (h.bytesWith - h.bytesWithout)) / h.bytesWithout;
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  rows.push({ name: `history: DB size added @${h.turns} turns`, value: added, unit: '%', target: '<= 10', met: added <= 10, note: `${mb(h.bytesWith)} vs ${mb(h.bytesWithout)} with the history tables emptied; ${h.rotations} rotations` });
  rows.push({ name: `history: window --at @${h.turns} turns (median)`, value: median(h.atMs), unit: 'ms', target: '<= 20', met: median(h.atMs) <= 20, note: `p95 ${pct(h.atMs, 0.95).toFixed(2)} ms, engine call` });
}

// 15. MCP (issue 45): recall through `mgpt mcp` on stdio over a 20,000-message entity, and the
// largest tool result against the max_tokens it was asked for.
if (section('mcp')) {
  const m = await benchMcp(bin, work, 20_000, quick ? 30 : 200);
  const med = median(m.recallMs);
  rows.push({ name: `mcp: recall @${m.messages} msgs through stdio (median)`, value: med, unit: 'ms', target: '<= 20', met: med <= 20, note: `p95 ${pct(m.recallMs, 0.95).toFixed(2)} ms, ${m.recallMs.length} calls, SDK Client to bin/mgpt mcp` });
  const largest = m.results.reduce((a, r) => (r.tokens > a.tokens ? r : a));
  const worst = m.results.reduce((a, r) => (r.tokens / r.maxTokens > a.tokens / a.maxTokens ? r : a));
  rows.push({ name: 'mcp: largest tool result', value: largest.tokens, unit: 'tokens', note: `${largest.tool} asked for max_tokens ${largest.maxTokens}` });
  const ratio = worst.tokens / worst.maxTokens;
  rows.push({ name: 'mcp: tool result / its max_tokens (worst)', value: ratio, unit: 'x', target: '<= 1', met: ratio <= 1, note: `${worst.tool}: ${worst.tokens} of ${worst.maxTokens}; ${m.results.length} results at max_tokens 100, 1000, 5000, 20000` });
}

// Semantic recall: a recall of an entity at the transcript cap ranked by words alone, and fused with
// brute-force cosine over every message's vector (768 floats, a common embedding width).
if (section('semantic')) {
  const r = await benchSemantic(work, quick ? 5_000 : 20_000, 768, quick ? 10 : 40);
  const note = `${r.messages} msgs x ${r.dims} dims, fake embeddings over loopback`;
  rows.push({ name: `semantic: recall by words @${r.messages} msgs (median)`, value: median(r.wordsMs), unit: 'ms', note: `p95 ${pct(r.wordsMs, 0.95).toFixed(2)} ms` });
  rows.push({ name: `semantic: recall fused with vectors @${r.messages} msgs (median)`, value: median(r.fusedMs), unit: 'ms', note: `p95 ${pct(r.fusedMs, 0.95).toFixed(2)} ms; ${note}` });
  rows.push({ name: `semantic: question embedded + vectors read + cosines (median)`, value: median(r.rankMs), unit: 'ms', note });
  rows.push({ name: 'semantic: database added per message', value: r.bytesPerMessage, unit: 'bytes', note: `${r.dims} float32s are ${r.dims * 4} bytes` });
}

// 14. Imports (issue 35): a generated ChatGPT export of 10,000 conversations (2 million messages)
// imported in a child process: messages per second and its peak RSS. MGPT_BENCH_IMPORT_CONVERSATIONS
// sets the size for a shared machine (--quick: 1,000); the target is for the full size.
if (section('import')) {
  const n = Number(process.env.MGPT_BENCH_IMPORT_CONVERSATIONS ?? (quick ? 1000 : 10_000));
  for (const r of await benchImport(root, work, n)) {
    const rate = r.messages / (r.ms / 1000);
    const at = `import ${r.store}: ${r.conversations.toLocaleString('en-US')} conversations, ${(r.messages / 1e6).toFixed(2)}M messages`;
    const full = r.conversations >= 10_000;
    const target = r.store === 'sqlite' && full ? { target: '>= 50000', met: rate >= 50_000 } : {};
    const cpuRate = r.messages / (r.cpuMs / 1000);
    rows.push({ name: `${at}: messages/s`, value: rate, unit: 'msg/s', ...target, note: `${(r.ms / 1000).toFixed(1)} s for a ${r.fileMb.toFixed(0)} MB export; ${Math.round(cpuRate)} msg per CPU-second` });
    const rss = r.store === 'sqlite' && full ? { target: '< 300', met: r.peakRssMb < 300 } : {};
    rows.push({ name: `${at}: peak RSS`, value: r.peakRssMb, unit: 'MB', ...rss });
  }
  // Large and hostile exports sent to a spawned mgpt serve while a client polls /healthz: the
  // server's peak RSS and the slowest /healthz answer during each import. MGPT_BENCH_IMPORT_EMPTY
  // sets the number of empty conversations (2 million; --quick: 200,000); MGPT_BENCH_IMPORT_LOAD
  // picks cases by a word of their name.
  const empty = Number(process.env.MGPT_BENCH_IMPORT_EMPTY ?? (quick ? 200_000 : 2_000_000));
  const idle = await idleHealthz(bin, work, 30_000);
  rows.push({ name: 'import load: an idle server (baseline): /healthz worst', value: idle.worstMs, unit: 'ms', note: `${idle.count} polls over 30 s, no import: the machine's own noise` });
  for (const r of await benchImportLoad(bin, work, empty, process.env.MGPT_BENCH_IMPORT_LOAD)) {
    const at = `import load: ${r.name}`;
    const note = `${r.fileMb.toFixed(1)} MB sent, ${r.status} in ${(r.ms / 1000).toFixed(1)} s: ${r.answer}`;
    const rss = r.name.includes('empty') ? { target: '< 300', met: r.peakRssMb < 300 } : {};
    rows.push({ name: `${at}: serve peak RSS`, value: r.peakRssMb, unit: 'MB', ...rss, note });
    rows.push({ name: `${at}: /healthz worst`, value: r.healthzWorstMs, unit: 'ms', target: '<= 250', met: r.healthzWorstMs <= 250, note: `${r.healthzCount} polls` });
  }
}

// 15. Same-title imports: 1,000 and 10,000 conversations all titled "New chat" against as many
// with distinct titles (two messages each, fresh SQLite files); naming must not grow faster than
// the import, so the same-title one is within 2x.
if (section('import')) {
  for (const r of await benchImportNaming(root, work, quick ? [1000] : [1000, 10_000])) {
    const at = `import ${r.conversations.toLocaleString('en-US')} same-title conversations`;
    const ratio = r.sameMs / r.distinctMs;
    rows.push({ name: `${at}: seconds`, value: r.sameMs / 1000, unit: 's', note: `distinct titles: ${(r.distinctMs / 1000).toFixed(2)} s` });
    rows.push({ name: `${at}: vs distinct titles`, value: ratio, unit: 'x', target: '<= 2', met: ratio <= 2 });
  }
}

rmSync(work, { recursive: true, force: true });

// Print and save.
const fmt = (r: Row) => (r.unit === 'x' ? r.value.toFixed(2) : r.value.toFixed(r.value < 10 ? 2 : 0));
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`\n${'scenario'.padEnd(width)}  ${'value'.padStart(9)}  unit  target    met`);
for (const r of rows) {
  const met = r.met === undefined ? '' : r.met ? 'yes' : 'NO';
  console.log(`${r.name.padEnd(width)}  ${fmt(r).padStart(9)}  ${r.unit.padEnd(4)}  ${(r.target ?? '').padEnd(8)}  ${met.padEnd(3)} ${r.note ?? ''}`);
}
const dir = join(root, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const result = { at: new Date().toISOString(), node: process.version, quick, only, rows };
writeFileSync(join(dir, 'latest.json'), JSON.stringify(result, null, 2) + '\n');
console.log(`\nwrote bench/results/latest.json`);
