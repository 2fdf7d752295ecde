// mgpt serve: buffered message throughput against bare node:http, and the latency it adds to the first token.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { type FakeOpenAI, startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { startPostgres } from '../test/helpers/postgres.js';

export interface ServeBench extends FirstTokenBench {
  serveRps: number;
  bareRps: number;
  ratio: number;
  /** The server process's CPU time (user + system) over the measured run, per turn. */
  cpuPerTurnUs: number;
  bareCpuPerTurnUs: number;
  sseRps: number;
  sseRatio: number;
  sseCpuPerTurnUs: number;
  /** Bare node:http running only a turn's SQL per request (bench/sql-floor.ts): the floor for any server on this store. */
  floorRps: number;
  floorCpuPerTurnUs: number;
}

/** A child's CPU time so far in µs (user + system), from /proc: what process.cpuUsage() would say inside it. */
export function cpuUs(child: ChildProcess): number {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line (11 and 12 after the name), in clock ticks.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

export function startChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

/** POST with stream: true, reading the whole SSE reply. */
async function postStream(url: string, key: string, body: unknown): Promise<void> {
  const res = await request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300 || !text.endsWith('data: [DONE]\n\n')) throw new Error(`${url}: ${res.statusCode} ${text}`);
}

async function post(url: string, key: string, body: unknown): Promise<any> {
  const res = await request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.body.json();
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Requests per second with one sequential loop per entry (one entity each: writes to one entity
 * are serialized); an entry with several URLs (one per replica) takes them in turn. With `server`,
 * also its CPU per turn.
 */
async function rps(urls: Array<string | string[]>, key: string, seconds: number, stream = false, server?: ChildProcess): Promise<{ rps: number; cpuPerTurnUs: number }> {
  let n = 0;
  const cpu0 = server ? cpuUs(server) : 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    urls.map(async (entry) => {
      const each = typeof entry === 'string' ? [entry] : entry;
      for (let i = 0; performance.now() < end; i++) {
        if (stream) await postStream(each[i % each.length], key, { content: `message ${n}`, stream: true });
        else await post(each[i % each.length], key, { content: `message ${n}`, stream: false });
        n++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return { rps: n / elapsed, cpuPerTurnUs: server ? (cpuUs(server) - cpu0) / n : NaN };
}

const SERVE_WORKERS = 8;

/**
 * Buffered echo turns per second through `replicas` mgpt serve processes on one database (a SQLite
 * file or a postgres:// URL), 8 loops on 8 entities: the one measurement behind every serve
 * throughput row. `alternate`: each loop's requests go to the replicas in turn (a round-robin
 * balancer); `sticky`: loop i stays on replica i mod n (a balancer with affinity per entity).
 */
export async function serveTurnsPerSecond(
  bin: string,
  work: string,
  db: string,
  replicas: number,
  seconds: number,
  spread: 'alternate' | 'sticky' = 'alternate',
  stream = false,
): Promise<{ rps: number; cpuPerTurnUs: number }> {
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, 'serve-cfg'), NO_COLOR: '1' };
  const made = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`keys create on ${db}: ${made.stderr}`);
  const key = made.stdout.trim();
  const servers: Array<{ child: ChildProcess; url: string }> = [];
  try {
    for (let i = 0; i < replicas; i++) servers.push(await startChild(process.execPath, [bin, 'serve', '--port', '0'], env));
    const entities: string[] = [];
    for (let i = 0; i < SERVE_WORKERS; i++) entities.push((await post(`${servers[0].url}/v1/entities`, key, { model: 'mgpt-1-27b' })).id);
    // Loop i starts on replica i mod n, so each replica serves its share of the loops at any moment.
    const at = (i: number, id: string) => `${servers[i % servers.length].url}/v1/entities/${id}/messages`;
    const loops = entities.map((id, i) => (spread === 'sticky' ? [at(i, id)] : servers.map((_, r) => at(i + r, id))));
    await rps(loops, key, 1, stream); // warm-up
    // Server CPU per turn is the one replica's (with several it would be a sum of processes).
    return await rps(loops, key, seconds, stream, replicas === 1 ? servers[0].child : undefined);
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => (s.child.exitCode === null ? new Promise((r) => s.child.once('exit', r)) : undefined)));
  }
}

export interface ReplicaBench {
  sqliteRps: number;
  pgOneRps: number;
  /** Two replicas, each request to the other one. */
  pgTwoRps: number;
  /** Two replicas, each entity's requests to one of them. */
  pgTwoStickyRps: number;
}

/**
 * Serve throughput on SQLite and on PostgreSQL (a throwaway cluster, as the tests start it) with one
 * and two replicas, each configuration on a database of its own. The configurations run in turn,
 * round after round, and each reports its median: load from elsewhere hits them alike. Null where
 * PostgreSQL cannot be started.
 */
export async function benchServeReplicas(root: string, work: string, quick: boolean): Promise<ReplicaBench | null> {
  const bin = join(root, 'bin', 'mgpt');
  const seconds = quick ? 2 : 5;
  const cluster = await startPostgres('bench: serve on PostgreSQL');
  if (!cluster) return null;
  try {
    const runs: Record<keyof ReplicaBench, number[]> = { sqliteRps: [], pgOneRps: [], pgTwoRps: [], pgTwoStickyRps: [] };
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      runs.sqliteRps.push((await serveTurnsPerSecond(bin, work, join(work, `serve-replicas-${round}.db`), 1, seconds)).rps);
      runs.pgOneRps.push((await serveTurnsPerSecond(bin, work, cluster.createDatabase(`bench_one_${round}`), 1, seconds)).rps);
      runs.pgTwoRps.push((await serveTurnsPerSecond(bin, work, cluster.createDatabase(`bench_two_${round}`), 2, seconds)).rps);
      runs.pgTwoStickyRps.push((await serveTurnsPerSecond(bin, work, cluster.createDatabase(`bench_sticky_${round}`), 2, seconds, 'sticky')).rps);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return { sqliteRps: median(runs.sqliteRps), pgOneRps: median(runs.pgOneRps), pgTwoRps: median(runs.pgTwoRps), pgTwoStickyRps: median(runs.pgTwoStickyRps) };
  } finally {
    cluster.stop();
  }
}

export async function benchServe(root: string, work: string, quick: boolean): Promise<ServeBench> {
  const bin = join(root, 'bin', 'mgpt');
  const fake = await startFakeOpenAI();
  const env = { ...process.env, MGPT_DB: join(work, 'serve.db'), MGPT_CONFIG_DIR: join(work, 'serve-cfg'), NO_COLOR: '1' };
  const key = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' }).stdout.trim();
  const workers = SERVE_WORKERS;
  const seconds = quick ? 2 : 5;

  // Throughput with the echo provider, against bare node:http answering the same JSON.
  const buffered = await serveTurnsPerSecond(bin, work, env.MGPT_DB, 1, seconds);
  const sse = await serveTurnsPerSecond(bin, work, env.MGPT_DB, 1, seconds, 'alternate', true);
  const bare = await startChild(process.execPath, [join(root, 'bench', 'bare-server.mjs')], env);
  await rps(Array(workers).fill(bare.url), key, 1);
  const bareRun = await rps(Array(workers).fill(bare.url), key, seconds, false, bare.child);
  bare.child.kill('SIGTERM');
  const bareRps = bareRun.rps;
  const floor = await startChild(process.execPath, ['--import', 'tsx', join(root, 'bench', 'sql-floor.ts'), join(work, 'floor.db')], { ...env, MGPT_FLOOR_CHECKPOINTS: '1' });
  const floorUrls = Array.from({ length: workers }, (_, i) => `${floor.url}/e/${i}`);
  await rps(floorUrls, key, 1);
  const floorRun = await rps(floorUrls, key, seconds, false, floor.child);
  floor.child.kill('SIGTERM');

  const ft = await firstTokenRun(bin, work, env, fake, quick);
  await fake.close();
  return {
    serveRps: buffered.rps,
    bareRps,
    ratio: buffered.rps / bareRps,
    cpuPerTurnUs: buffered.cpuPerTurnUs,
    bareCpuPerTurnUs: bareRun.cpuPerTurnUs,
    sseRps: sse.rps,
    sseRatio: sse.rps / bareRps,
    sseCpuPerTurnUs: sse.cpuPerTurnUs,
    floorRps: floorRun.rps,
    floorCpuPerTurnUs: floorRun.cpuPerTurnUs,
    ...ft,
  };
}

export interface FirstTokenBench {
  firstTokenAddedMs: number;
  firstTokenP95Ms: number;
  /** The same through POST /v1/chat/completions (the OpenAI facade) on the same entity. */
  facadeFirstTokenAddedMs: number;
  facadeFirstTokenP95Ms: number;
}

/** Only the first-token rows: `node --import tsx -e "import('./bench/serve.ts').then(m => m.benchFirstToken(...))"`. */
export async function benchFirstToken(root: string, work: string, quick: boolean): Promise<FirstTokenBench> {
  const fake = await startFakeOpenAI();
  const env = { ...process.env, MGPT_DB: join(work, 'serve.db'), MGPT_CONFIG_DIR: join(work, 'serve-cfg'), NO_COLOR: '1' };
  try {
    return await firstTokenRun(join(root, 'bin', 'mgpt'), work, env, fake, quick);
  } finally {
    await fake.close();
  }
}

/**
 * First-token latency: the fake provider notes when it writes the first token; the client, when
 * the first chunk arrives. Same process, same clock; the difference is what the server adds. The
 * entity route and the facade alternate on one entity, so load noise hits both alike.
 */
async function firstTokenRun(bin: string, work: string, env: NodeJS.ProcessEnv, fake: FakeOpenAI, quick: boolean): Promise<FirstTokenBench> {
  const routed = await startChild(process.execPath, [bin, 'serve', '--port', '0'], {
    ...env,
    MGPT_DB: join(work, 'serve-latency.db'),
    MGPT_PROVIDER: 'openai',
    MGPT_PROVIDER_URL: fake.url,
  });
  const key2 = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], {
    env: { ...env, MGPT_DB: join(work, 'serve-latency.db') },
    encoding: 'utf8',
  }).stdout.trim();
  const id = (await post(`${routed.url}/v1/entities`, key2, { model: 'mgpt-1-27b' })).id;
  fake.fallback = () => ({ text: ['first', ' second'], delayMs: 20 });
  const measure = async (path: string, body: unknown): Promise<number | undefined> => {
    const res = await request(`${routed.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key2}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    let got = 0;
    for await (const piece of res.body) if (!got && String(piece).includes('"content":"first"')) got = performance.now();
    const sent = fake.firstTokenAt.at(-1);
    return got && sent ? got - sent : undefined;
  };
  const added: number[] = [];
  const facade: number[] = [];
  for (let i = 0; i < (quick ? 20 : 60); i++) {
    const a = await measure(`/v1/entities/${id}/messages`, { content: `turn ${i}` });
    if (a !== undefined) added.push(a);
    // One user message and no history: always a new turn on the entity.
    const f = await measure('/v1/chat/completions', { model: `entity:${id}`, messages: [{ role: 'user', content: `facade turn ${i}` }], stream: true });
    if (f !== undefined) facade.push(f);
  }
  routed.child.kill('SIGTERM');
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] ?? NaN;
  return { firstTokenAddedMs: p(added, 0.5), firstTokenP95Ms: p(added, 0.95), facadeFirstTokenAddedMs: p(facade, 0.5), facadeFirstTokenP95Ms: p(facade, 0.95) };
}
