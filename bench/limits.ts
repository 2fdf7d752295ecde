// Rate limits under load (issue 23): 200 clients on 4 keys offering twice their limits for 20 s,
// against one mgpt serve process (SQLite) and two replicas (PostgreSQL): the share refused against
// what the limits allow, no 5xx, and the servers' CPU per admitted turn against an unlimited run.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startPostgres } from '../test/helpers/postgres.js';
import { cpuUs, startChild } from './serve.js';

const CLIENTS = 200;
const KEYS = 4;
/** Each key's requests per minute: 10 admitted a second per key, 40 in all. */
const RPM = 600;

export interface LoadRun {
  seconds: number;
  offered: number;
  admitted: number;
  refused: number;
  server5xx: number;
  /** Answers neither 200, 429 nor 5xx (there should be none). */
  other: number;
  /** The first 5xx or other answer, as the server said it. */
  firstFailure?: string;
  /** What the limits allow in the run: a minute's rate over its length (no limit: every request). */
  allowed: number;
  /** The servers' CPU time (user + system, all processes) per admitted turn. */
  cpuPerTurnUs: number;
}

/** The three runs of one configuration (see `run`). */
export interface LimitRuns {
  limited: LoadRun;
  unlimited: LoadRun;
  floor: LoadRun;
}

export interface LimitsBench {
  one: LimitRuns;
  two: LimitRuns | null;
}

type Mode = keyof LimitRuns;

/** A path no route serves: answered 404 before any key check or query (the floor's half of the requests). */
const NO_ROUTE = '/v1/no-such-route';

interface Fleet {
  servers: Array<{ child: ChildProcess; url: string }>;
  keys: string[];
  entities: string[];
}

const agent = new Agent({ connections: CLIENTS + 50 });

async function send(url: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await request(url, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, body: await res.body.json() };
}

/** Keys (with the limit, or none), `replicas` servers on `db`, and one entity per client. */
async function fleet(bin: string, work: string, db: string, replicas: number, limited: boolean): Promise<Fleet> {
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, 'limits-cfg'), NO_COLOR: '1' };
  const keys: string[] = [];
  for (let k = 0; k < KEYS; k++) {
    const args = [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create', ...(limited ? ['--rpm', String(RPM)] : [])];
    const made = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`keys create on ${db}: ${made.stderr}`);
    keys.push(made.stdout.trim());
  }
  const servers: Fleet['servers'] = [];
  for (let i = 0; i < replicas; i++) servers.push(await startChild(process.execPath, [bin, 'serve', '--port', '0', '--log-format', 'off'], env));
  const entities = await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => (await send(`${servers[i % replicas].url}/v1/entities`, keys[i % KEYS], { model: 'mgpt-1-27b' })).body.id as string));
  return { servers, keys, entities };
}

/** Spends each key's minute of requests (a burst the bucket allows) with cheap ones, so the run measures the steady rate. */
async function drain(f: Fleet): Promise<void> {
  await Promise.all(
    f.keys.map(async (key, k) => {
      let refused = false;
      const lane = async (j: number) => {
        for (let i = 0; !refused; i++) {
          const url = `${f.servers[(k + j + i) % f.servers.length].url}/v1/chat/completions`;
          if ((await send(url, key, { model: 'not-served', messages: [] })).status === 429) refused = true;
        }
      };
      await Promise.all(Array.from({ length: 10 }, (_, j) => lane(j)));
    }),
  );
}

/**
 * Every client sends one buffered turn each `intervalMs` (from a random start), alternating the
 * servers, for `seconds`; the servers' CPU is read over the run and its last answers.
 */
async function load(f: Fleet, intervalMs: number, seconds: number, halfRefusedCheaply = false): Promise<Omit<LoadRun, 'allowed' | 'cpuPerTurnUs'> & { cpuUs: number }> {
  const count: { offered: number; admitted: number; refused: number; server5xx: number; other: number; firstFailure?: string } = { offered: 0, admitted: 0, refused: 0, server5xx: 0, other: 0 };
  const cpu = () => f.servers.reduce((s, x) => s + cpuUs(x.child), 0);
  const cpu0 = cpu();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const client = async (i: number) => {
    let next = t0 + Math.random() * intervalMs;
    for (let n = 0; next < end; n++, next += intervalMs) {
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      const cheap = halfRefusedCheaply && (i + n) % 2 === 1;
      const url = `${f.servers[(i + n) % f.servers.length].url}${cheap ? NO_ROUTE : `/v1/entities/${f.entities[i]}/messages`}`;
      count.offered++;
      const { status, body } = await send(url, f.keys[i % KEYS], { content: `turn ${n} of client ${i}`, stream: false });
      if (status === 200) count.admitted++;
      else if (status === 429 || (cheap && status === 404)) count.refused++;
      else if (status >= 500) count.server5xx++;
      else count.other++;
      if (status !== 200 && status !== 429) count.firstFailure ??= `${status} ${JSON.stringify(body)}`;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  return { ...count, seconds: (performance.now() - t0) / 1000, cpuUs: cpu() - cpu0 };
}

async function stop(f: Fleet): Promise<void> {
  for (const s of f.servers) s.child.kill('SIGTERM');
  await Promise.all(f.servers.map((s) => (s.child.exitCode === null ? new Promise((r) => s.child.once('exit', r)) : undefined)));
}

/**
 * `limited` offers twice the limits (each key's 50 clients every 2.5 s: 20 a second against 10);
 * `unlimited` offers what the limits admit (every 5 s), so both servers do the same turns and the
 * difference is the limiter's: its admissions and the refusals. `floor` is the limited run's
 * traffic with the limiter removed: the same turns, and as many requests again refused by the
 * cheapest answer a server has (a path no route serves: a 404 before any key check or query).
 */
async function run(bin: string, work: string, db: (name: string) => string, replicas: number, mode: Mode, seconds: number): Promise<LoadRun> {
  const limited = mode === 'limited';
  const f = await fleet(bin, work, db(mode), replicas, limited);
  try {
    if (limited) await drain(f);
    const perKey = RPM / 60;
    const interval = ((CLIENTS / KEYS) / (perKey * (mode === 'unlimited' ? 1 : 2))) * 1000;
    const r = await load(f, interval, seconds, mode === 'floor');
    const allowed = limited ? KEYS * (perKey * r.seconds + 1) : mode === 'floor' ? r.offered / 2 : r.offered;
    const { cpuUs: used, ...rest } = r;
    return { ...rest, allowed, cpuPerTurnUs: used / r.admitted };
  } finally {
    await stop(f);
  }
}

/**
 * Each configuration's three runs, round after round (three, one with `quick`), each on a
 * database of its own; each mode keeps its median round by CPU per admitted turn, since load from
 * elsewhere on a shared machine moves a 20 s run by tens of percent and hits the rounds alike.
 */
export async function benchLimits(root: string, work: string, quick: boolean): Promise<LimitsBench> {
  const bin = join(root, 'bin', 'mgpt');
  const seconds = quick ? 8 : 20;
  const runs = async (db: (name: string) => string, replicas: number): Promise<LimitRuns> => {
    const all: Record<Mode, LoadRun[]> = { unlimited: [], limited: [], floor: [] };
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      for (const mode of ['unlimited', 'limited', 'floor'] as const) all[mode].push(await run(bin, work, (name) => db(`${name}_${round}`), replicas, mode, seconds));
    }
    const median = (xs: LoadRun[]) => [...xs].sort((a, b) => a.cpuPerTurnUs - b.cpuPerTurnUs)[(xs.length - 1) >> 1];
    return { unlimited: median(all.unlimited), limited: median(all.limited), floor: median(all.floor) };
  };
  const one = await runs((name) => join(work, `limits-${name}.db`), 1);
  const cluster = await startPostgres('bench: rate limits on two PostgreSQL replicas');
  if (!cluster) return { one, two: null };
  try {
    const two = await runs((name) => cluster.createDatabase(`limits_${name}`), 2);
    return { one, two };
  } finally {
    cluster.stop();
  }
}
