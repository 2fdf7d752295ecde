// Large branches on mgpt serve: how long /healthz waits while 8 clients each fork an entity with a
// 25,000-message history (the event loop must never be held for more than 250 ms), and the
// server's peak memory meanwhile.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';

export interface BranchRun {
  /** /healthz round trips while the requests ran (ms). */
  healthMs: number[];
  totalMs: number;
  peakRssMb: number;
}

export interface BranchBench {
  /** The pings with nothing else running: what they cost on their own. */
  idle: BranchRun;
  one: BranchRun;
  eight: BranchRun;
  /** The floor: the same 8 bodies without the branch header (read, parsed, reconciled, answered statelessly). */
  eightRefused: BranchRun;
}

const MESSAGES = 25_000;
const CLIENTS = 8;

function start(bin: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--body-limit', String(8 * 1024 * 1024)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('exit', (code) => reject(new Error(`mgpt serve exited ${code}`)));
  });
}

/** A forged history of whole turns (about 0.9 MB of JSON) that contradicts the entity at its first message. */
function history(client: number): Array<{ role: string; content: string }> {
  const out = Array.from({ length: MESSAGES }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `client ${client}, message ${i}: a line of ordinary words`,
  }));
  out.push({ role: 'user', content: 'and now?' });
  return out;
}

async function branch(url: string, key: string, client: number, fork: boolean): Promise<void> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(fork ? { 'mgpt-on-conflict': 'branch' } : {}) },
    body: JSON.stringify({ model: 'entity:trunk', messages: history(client) }),
  });
  const text = await res.body.text();
  // Without the header a contradicting history is answered without storing anything (200).
  if (res.statusCode !== 200) throw new Error(`branch ${client}: ${res.statusCode} ${text.slice(0, 300)}`);
}

/** `clients` requests at once (branching, or answered statelessly), with /healthz pinged all the while. */
async function measure(url: string, key: string, child: ChildProcess, clients: number, fork: boolean): Promise<BranchRun> {
  const t0 = performance.now();
  const all = Promise.all(Array.from({ length: clients }, (_, i) => branch(url, key, i, fork)));
  let peakRssMb = 0;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(child))), 200);
  const healthMs = await pingUntil(url, all);
  await all;
  clearInterval(sampler);
  return { healthMs, totalMs: performance.now() - t0, peakRssMb };
}

/** Pings /healthz back to back until `done` settles; each round trip's time. */
async function pingUntil(url: string, done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => {});
  const out: number[] = [];
  while (!finished) {
    const t0 = performance.now();
    await (await request(`${url}/healthz`)).body.text();
    out.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  return out;
}

/** The child's resident memory now, from /proc (as the serve bench reads its CPU time). */
function rssMb(child: ChildProcess): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) / 1024;
}

export async function benchBranch(root: string, work: string): Promise<BranchBench> {
  const bin = join(root, 'bin', 'mgpt');
  const env = { ...process.env, MGPT_DB: join(work, 'branch.db'), MGPT_CONFIG_DIR: join(work, 'branch-cfg'), NO_COLOR: '1' };
  const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  const key = run(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create']).stdout.trim();
  run(['entities', 'create', '--name', 'trunk']);
  run(['send', 'trunk', 'the first message']);
  const { child, url } = await start(bin, env);
  try {
    const idle = { healthMs: await pingUntil(url, new Promise((r) => setTimeout(r, 500))), totalMs: 500, peakRssMb: rssMb(child) };
    // Warm: the first branch of a process loads the tokenizer table and the facade's code.
    await branch(url, key, 99, true);
    const eightRefused = await measure(url, key, child, CLIENTS, false);
    const one = await measure(url, key, child, 1, true);
    const eight = await measure(url, key, child, CLIENTS, true);
    return { idle, one, eight, eightRefused };
  } finally {
    child.kill('SIGTERM');
  }
}
