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
const CLIENTS = [2, 4, 8, 16, 32, 64, 128];

export interface CapacityStep {
  clients: number;
  turnsPerSecond: number;
  p99Ms: number;
  /** PostgreSQL's CPU over the step, as a share of the machine's cores (SQLite: 0). */
  dbCpuShare: number;
  /** The replicas' CPU over the step, as a share of the machine's cores. */
  serveCpuShare: number;
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
  /** The top statements by total time: text, calls per turn, share of the time. */
  top: Array<{ query: string; perTurn: number; share: number }>;
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

/** The database's processes' CPU in µs: backends that started during the step count from zero. */
function dbCpu(cluster: PgCluster | null): () => number {
  if (!cluster) return () => 0;
  return () => ticksOf(cluster.pids()) * TICK_US;
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

async function fleet(bin: string, work: string, db: string, replicas: number, providerUrl: string, label: string): Promise<Fleet> {
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, `capacity-${label}-cfg`), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: providerUrl, NO_COLOR: '1' };
  const made = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`keys create on ${db}: ${made.stderr}`);
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
  const sorted = latencies.sort((a, b) => a - b);
  const p99Ms = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN;
  return {
    clients,
    turnsPerSecond: latencies.length / (wallUs / 1e6),
    p99Ms,
    dbCpuShare: (dbCpuUs() - db0) / (wallUs * cores()),
    serveCpuShare: (serveCpu() - serve0) / (wallUs * cores()),
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

/** One configuration's ramp: replicas on `db` (a SQLite file, or a database on `cluster`). */
async function ramp(bin: string, work: string, label: string, db: string, replicas: number, cluster: PgCluster | null, providerUrl: string, seconds: number): Promise<CapacityRun> {
  const f = await fleet(bin, work, db, replicas, providerUrl, label);
  try {
    await step(f, 4, 1, () => 0, 0); // warm-up: connections, caches, JIT
    if (cluster) await resetStatements(db);
    const steps: CapacityStep[] = [];
    let turns = 0;
    let passed = false;
    for (const clients of CLIENTS) {
      const s = await step(f, clients, seconds, dbCpu(cluster), turns + 1000);
      turns += s.turns + s.failures;
      const { turns: _, ...row } = s;
      steps.push(row);
      if (s.p99Ms > CAPACITY_P99_MS) {
        passed = true;
        break;
      }
    }
    const within = steps.filter((s) => s.p99Ms <= CAPACITY_P99_MS);
    const atLimit = within.length ? within.reduce((a, b) => (b.turnsPerSecond > a.turnsPerSecond ? b : a)) : steps[0]!;
    const stats = cluster ? await statements(db) : [];
    const calls = stats.reduce((s, x) => s + x.calls, 0);
    const ms = stats.reduce((s, x) => s + x.ms, 0);
    const top = [...stats].sort((a, b) => b.ms - a.ms).slice(0, 5).map((x) => ({ query: x.query.slice(0, 120), perTurn: x.calls / turns, share: x.ms / ms }));
    return { label, steps, atLimit, passed, statementsPerTurn: cluster ? calls / turns : NaN, hottest: top[0], top };
  } finally {
    for (const s of f.servers) s.child.kill('SIGTERM');
    await Promise.all(f.servers.map((s) => (s.child.exitCode === null ? new Promise((r) => s.child.once('exit', r)) : undefined)));
  }
}

export interface CapacityBench {
  runs: CapacityRun[];
  /** The same PostgreSQL ramps with another build (MGPT_BENCH_BASELINE: a tree's bin/mgpt), in the same run. */
  baseline: CapacityRun[];
}

/**
 * SQLite with one process, then PostgreSQL with 1, 2 and 4 replicas (each on a database of its
 * own on one cluster); with `baselineBin`, each PostgreSQL ramp runs with that build right before
 * this one's, so load from elsewhere hits both alike. Null where PostgreSQL cannot be started.
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
  try {
    const runs: CapacityRun[] = [];
    const baseline: CapacityRun[] = [];
    runs.push(await ramp(bin, work, 'SQLite, 1 process', join(work, 'capacity.db'), 1, null, fake.url, seconds));
    for (const replicas of [1, 2, 4]) {
      const label = `PostgreSQL, ${replicas} replica${replicas > 1 ? 's' : ''}`;
      if (baselineBin) baseline.push(await ramp(baselineBin, work, `${label} (baseline)`, await withStatements(cluster, `capacity_base_${replicas}`), replicas, cluster, fake.url, seconds));
      runs.push(await ramp(bin, work, label, await withStatements(cluster, `capacity_${replicas}`), replicas, cluster, fake.url, seconds));
    }
    return { runs, baseline };
  } finally {
    cluster.stop();
    await fake.close();
    await agent.close();
  }
}
