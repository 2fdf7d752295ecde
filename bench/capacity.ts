// How many turns one PostgreSQL holds: 1, 2 and 4 mgpt serve replicas on one database (and one
// process on SQLite beside them), many entities, an instant provider (the scripted fake, no delay),
// closed-loop clients ramping until p99 turn latency passes 250 ms. Per step: turns a second, p99,
// PostgreSQL's CPU share (/proc of the postmaster's children) and, from pg_stat_statements, the
// statements a turn runs and the one that takes the most time.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { type PgCluster, startPostgres } from '../test/helpers/postgres.js';
import { cpuUs, startChild } from './serve.js';

/** The p99 turn latency that ends a ramp. */
export const CAPACITY_P99_MS = 250;
const ENTITIES = 512;
const CLIENTS = [2, 4, 8, 16, 32, 64];

export interface CapacityStep {
  clients: number;
  turnsPerSecond: number;
  p99Ms: number;
  /** PostgreSQL's CPU over the step, as a share of the machine's cores (SQLite: 0). */
  dbCpuShare: number;
  /** The replicas' CPU over the step, as a share of the machine's cores. */
  serveCpuShare: number;
  /** The same as CPU time per turn (µs): steadier than shares where other work shares the cores. */
  dbCpuPerTurnUs: number;
  serveCpuPerTurnUs: number;
  failures: number;
}

export interface CapacityRun {
  label: string;
  steps: CapacityStep[];
  /** The last step whose p99 stayed within the bound (the first step when none did). */
  atLimit: CapacityStep;
  /** Whether a step passed the bound (false: the ramp ended at its largest step first). */
  passed: boolean;
  /** Statements the replicas sent (BEGIN and COMMIT included: each is a round trip; not the foreign-key checks inside them) per turn over the ramp; NaN on SQLite. */
  statementsPerTurn: number;
  hottest?: { query: string; perTurn: number; share: number };
  /** The statements' execution time in the database a turn (pg_stat_statements), in ms; NaN on SQLite. */
  dbMsPerTurn: number;
  /** The top statements by total time: text, calls per turn, share of the time. */
  top: Array<{ query: string; perTurn: number; share: number }>;
  /** Statements on rows every entity shares (the account's balance, the route's calibration, a key's rate state), a turn. */
  shared: Array<{ query: string; perTurn: number }>;
}

const cores = () => Number(spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()) || 1;
const TICK_US = 1e6 / 100;

function ticksOf(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sum += Number(f[11]) + Number(f[12]);
    } catch {
      // A backend that ended meanwhile: its ticks are lost, as a short-lived backend's would be.
    }
  }
  return sum;
}

/**
 * The database's processes' CPU in µs since the first call: a backend that started meanwhile
 * counts from zero, one that ended keeps what it had when last seen (never a negative step).
 */
function dbCpu(cluster: PgCluster | null): () => number {
  if (!cluster) return () => 0;
  let start: Map<number, number> | undefined;
  const last = new Map<number, number>();
  return () => {
    for (const pid of cluster.pids()) last.set(pid, ticksOf([pid]));
    start ??= new Map(last);
    let total = 0;
    for (const [pid, t] of last) total += t - (start.get(pid) ?? 0);
    return total * TICK_US;
  };
}

const agent = new Agent({ connections: 256 });

async function turn(url: string, key: string, n: number): Promise<boolean> {
  const res = await request(url, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: `turn ${n}`, stream: false }) });
  await res.body.text();
  return res.statusCode === 200;
}

interface Fleet {
  servers: Array<{ child: ChildProcess; url: string }>;
  key: string;
  /** Each entity's URL, on the replica its id hashes to (a balancer with affinity by entity). */
  urls: string[];
}

/** `metered`: the account gets a balance, so every turn of every entity moves that one row. */
async function fleet(bin: string, work: string, db: string, replicas: number, providerUrl: string, label: string, metered: boolean): Promise<Fleet> {
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, `capacity-${label}-cfg`), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: providerUrl, NO_COLOR: '1' };
  const made = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`keys create on ${db}: ${made.stderr}`);
  const topup = metered && spawnSync(process.execPath, [bin, 'accounts', 'topup', 'local', '1000000'], { env, encoding: 'utf8' });
  if (topup && topup.status !== 0) throw new Error(`accounts topup on ${db}: ${topup.stderr}`);
  const key = made.stdout.trim();
  const servers: Fleet['servers'] = [];
  for (let i = 0; i < replicas; i++) servers.push(await startChild(process.execPath, [bin, 'serve', '--port', '0', '--log-format', 'off'], env));
  const urls: string[] = [];
  for (let i = 0; i < ENTITIES; i += 32) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(32, ENTITIES - i) }, async (_, j) => {
        const res = await request(`${servers[(i + j) % replicas].url}/v1/entities`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mgpt-1-27b' }) });
        const body = (await res.body.json()) as { id: string };
        if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`create entity: ${res.statusCode} ${JSON.stringify(body)}`);
        return `${servers[(i + j) % replicas].url}/v1/entities/${body.id}/messages`;
      }),
    );
    urls.push(...batch);
  }
  return { servers, key, urls };
}

/** `clients` closed loops for `seconds`, client c taking entities c, c + clients, ... in turn (no two at one entity). */
async function step(f: Fleet, clients: number, seconds: number, dbCpuUs: () => number, n0: number): Promise<CapacityStep & { turns: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const serveCpu = () => f.servers.reduce((s, x) => s + cpuUs(x.child), 0);
  const [db0, serve0, t0] = [dbCpuUs(), serveCpu(), performance.now()];
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        const url = f.urls[(c + i * clients) % f.urls.length];
        const a = performance.now();
        if (await turn(url, f.key, n0 + i)) latencies.push(performance.now() - a);
        else failures++;
      }
    }),
  );
  const wallUs = (performance.now() - t0) * 1000;
  const [dbUs, serveUs] = [dbCpuUs() - db0, serveCpu() - serve0];
  const sorted = latencies.sort((a, b) => a - b);
  const p99Ms = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN;
  return {
    clients,
    turnsPerSecond: latencies.length / (wallUs / 1e6),
    p99Ms,
    dbCpuShare: dbUs / (wallUs * cores()),
    serveCpuShare: serveUs / (wallUs * cores()),
    dbCpuPerTurnUs: dbUs / Math.max(1, latencies.length),
    serveCpuPerTurnUs: serveUs / Math.max(1, latencies.length),
    failures,
    turns: latencies.length,
  };
}

async function statements(url: string): Promise<Array<{ query: string; calls: number; ms: number }>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ query: string; calls: string; ms: number }>(
      `SELECT query, calls, total_exec_time AS ms FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`,
    );
    return rows.map((r) => ({ query: r.query.replace(/\s+/g, ' '), calls: Number(r.calls), ms: r.ms }));
  } finally {
    await c.end();
  }
}

/** A fresh database with pg_stat_statements' view in it. */
async function withStatements(cluster: PgCluster, name: string): Promise<string> {
  const url = cluster.createDatabase(name);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('CREATE EXTENSION pg_stat_statements').finally(() => c.end());
  return url;
}

async function resetStatements(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('SELECT pg_stat_statements_reset()').finally(() => c.end());
}

/** One configuration: its replicas on `db` (a SQLite file, or a database on `cluster`), its ramp so far. */
interface Config {
  label: string;
  db: string;
  cluster: PgCluster | null;
  fleet: Fleet;
  steps: CapacityStep[];
  turns: number;
  passed: boolean;
}

async function config(bin: string, work: string, label: string, db: string, replicas: number, cluster: PgCluster | null, providerUrl: string, metered = false): Promise<Config> {
  const f = await fleet(bin, work, db, replicas, providerUrl, label.replace(/\W+/g, '-'), metered);
  await step(f, 4, 1, () => 0, 0); // warm-up: connections, caches, JIT
  if (cluster) await resetStatements(db);
  return { label, db, cluster, fleet: f, steps: [], turns: 0, passed: false };
}

/**
 * The configurations ramp together: each number of clients runs on each configuration in turn
 * (one at a time, the others idle), so load from elsewhere on a shared machine hits them alike; a
 * configuration leaves the ramp after two steps in a row past the bound.
 */
async function rampTogether(configs: Config[], seconds: number): Promise<void> {
  const over = new Map<Config, number>();
  for (const clients of CLIENTS) {
    const left = configs.filter((c) => !c.passed);
    if (!left.length) return;
    for (const c of left) {
      const s = await step(c.fleet, clients, seconds, dbCpu(c.cluster), c.turns + 1000);
      c.turns += s.turns + s.failures;
      const { turns: _, ...row } = s;
      c.steps.push(row);
      // Past the bound twice in a row: one step can be a neighbour's burst on a shared machine.
      over.set(c, s.p99Ms > CAPACITY_P99_MS ? (over.get(c) ?? 0) + 1 : 0);
      c.passed = over.get(c)! >= 2;
    }
  }
}

/** Rounds of one step at `clients` on each configuration in turn: each one's median round by turns a second. */
async function sideBySide(configs: Config[], clients: number, seconds: number, rounds: number): Promise<CapacityStep[]> {
  const all = configs.map(() => [] as CapacityStep[]);
  for (let r = 0; r < rounds; r++) {
    // Every other round in reverse, so no configuration always follows the same one.
    for (const [i, c] of (r % 2 ? [...configs.entries()].reverse() : [...configs.entries()])) {
      const s = await step(c.fleet, clients, seconds, dbCpu(c.cluster), c.turns + 1000);
      c.turns += s.turns + s.failures;
      all[i]!.push(s);
    }
  }
  return all.map((xs) => [...xs].sort((a, b) => a.turnsPerSecond - b.turnsPerSecond)[(xs.length - 1) >> 1]!);
}

/** Writes to a row that is not one entity's: every turn of every entity may queue on it. */
const SHARED_ROWS = /UPDATE accounts|route_calibration|rate_state/;

/** A configuration's result, with the statements its turns sent (PostgreSQL). */
async function resultOf(c: Config): Promise<CapacityRun> {
  const within = c.steps.filter((s) => s.p99Ms <= CAPACITY_P99_MS);
  const atLimit = within.length ? within.reduce((a, b) => (b.turnsPerSecond > a.turnsPerSecond ? b : a)) : c.steps[0]!;
  const stats = c.cluster ? await statements(c.db) : [];
  const calls = stats.reduce((n, x) => n + x.calls, 0);
  const ms = stats.reduce((n, x) => n + x.ms, 0);
  const top = [...stats].sort((a, b) => b.ms - a.ms).slice(0, 5).map((x) => ({ query: x.query.slice(0, 120), perTurn: x.calls / c.turns, share: x.ms / ms }));
  const shared = stats.filter((x) => SHARED_ROWS.test(x.query)).map((x) => ({ query: x.query.slice(0, 120), perTurn: x.calls / c.turns }));
  return { label: c.label, steps: c.steps, atLimit, passed: c.passed, statementsPerTurn: c.cluster ? calls / c.turns : NaN, dbMsPerTurn: c.cluster ? ms / c.turns : NaN, hottest: top[0], top, shared };
}

async function stop(c: Config): Promise<void> {
  for (const s of c.fleet.servers) s.child.kill('SIGTERM');
  await Promise.all(c.fleet.servers.map((s) => (s.child.exitCode === null ? new Promise((r) => s.child.once('exit', r)) : undefined)));
}

export interface CapacityBench {
  runs: CapacityRun[];
  /** The same PostgreSQL ramps with another build (MGPT_BENCH_BASELINE: a tree's bin/mgpt), in the same run. */
  baseline: CapacityRun[];
  /** After the ramps, every PostgreSQL configuration at SIDE_CLIENTS, round after round: the median round of each. */
  sideBySide: Array<{ label: string; step: CapacityStep }>;
}

/** Clients in the side-by-side rounds: below every configuration's limit in the runs seen here. */
export const SIDE_CLIENTS = 8;
const METERED = 'PostgreSQL, 2 replicas, metered account';

/**
 * SQLite with one process and PostgreSQL with 1, 2 and 4 replicas (each on a database of its own
 * on one cluster), all started first and ramped together; with `baselineBin`, each PostgreSQL
 * configuration also runs with that build; and 2 replicas whose account is metered (its balance
 * row is the one row every turn of every entity writes). Then each PostgreSQL configuration runs
 * SIDE_CLIENTS clients in rounds, one after another. Null where PostgreSQL cannot be started.
 */
export async function benchCapacity(root: string, work: string, quick: boolean, baselineBin?: string): Promise<CapacityBench | null> {
  const bin = join(root, 'bin', 'mgpt');
  const seconds = quick ? 2 : 3;
  const fake = await startFakeOpenAI();
  fake.fallback = () => ({ text: 'one two three four five six seven eight', usage: { prompt_tokens: 40, completion_tokens: 8 } });
  const cluster = await startPostgres('bench: capacity of one PostgreSQL', { settings: ['shared_preload_libraries=pg_stat_statements', 'max_connections=200'] });
  if (!cluster) {
    await fake.close();
    return null;
  }
  const configs: Config[] = [];
  try {
    configs.push(await config(bin, work, 'SQLite, 1 process', join(work, 'capacity.db'), 1, null, fake.url));
    for (const replicas of [1, 2, 4]) {
      const label = `PostgreSQL, ${replicas} replica${replicas > 1 ? 's' : ''}`;
      if (baselineBin) configs.push(await config(baselineBin, work, `${label} (baseline)`, await withStatements(cluster, `capacity_base_${replicas}`), replicas, cluster, fake.url));
      configs.push(await config(bin, work, label, await withStatements(cluster, `capacity_${replicas}`), replicas, cluster, fake.url));
    }
    configs.push(await config(bin, work, METERED, await withStatements(cluster, 'capacity_metered'), 2, cluster, fake.url, true));
    await rampTogether(configs, seconds);
    const pg = configs.filter((c) => c.cluster);
    const side = await sideBySide(pg, SIDE_CLIENTS, seconds, quick ? 1 : 5);
    const all = await Promise.all(configs.map(resultOf));
    return {
      runs: all.filter((r) => !r.label.endsWith('(baseline)')),
      baseline: all.filter((r) => r.label.endsWith('(baseline)')),
      sideBySide: pg.map((c, i) => ({ label: c.label, step: side[i]! })),
    };
  } finally {
    await Promise.all(configs.map(stop));
    cluster.stop();
    await fake.close();
    await agent.close();
  }
}
