// What `mgpt serve` adds to a buffered request against the real llama-server: the same
// chat completion sent directly and through serve's OpenAI facade (a stateless completion), one
// after the other, so the server's cache and the machine's load treat both alike.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { llamaServerParts, startLlamaServer } from '../test/helpers/llama-server.js';

export interface ServeLlamaBench {
  directMs: number;
  serveMs: number;
  addedMs: number;
  /** The same through serve to the scripted fake (no model server's threads beside it). */
  fakeAddedMs: number;
  /** The floor: the same request through a bare node:http process that only forwards it (bench/bare-proxy.mjs). */
  proxyAddedMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export function startServe(bin: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

export async function timed(url: string, body: unknown, key?: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
  return performance.now() - t0;
}

/** null when llama-server or the model is not here. */
export async function benchServeLlama(root: string, work: string, runs: number): Promise<ServeLlamaBench | null> {
  const parts = llamaServerParts();
  if (!parts) return null;
  const server = await startLlamaServer(parts, ['-c', '2048', '-np', '1', '--temp', '0']);
  const llama = await added(root, work, 'llama', server.url, runs).finally(() => server.stop());
  const fake = await startFakeOpenAI();
  fake.fallback = () => ({ text: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen', delayMs: 12, usage: { prompt_tokens: 100, completion_tokens: 16 } });
  const floor = await added(root, work, 'fake', fake.url, runs).finally(() => fake.close());
  return { ...llama, fakeAddedMs: floor.addedMs };
}

export function startProxy(root: string, providerUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(root, 'bench', 'bare-proxy.mjs'), providerUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('exit', (code) => reject(new Error(`the bare proxy exited ${code}`)));
  });
}

/** Interleaved medians: the same buffered completion sent to `providerUrl` directly and through serve. */
async function added(root: string, work: string, name: string, providerUrl: string, runs: number): Promise<Omit<ServeLlamaBench, 'fakeAddedMs'>> {
  const proxy = await startProxy(root, providerUrl);
  const bin = join(root, 'bin', 'mgpt');
  const env = { ...process.env, MGPT_DB: join(work, `serve-${name}.db`), MGPT_CONFIG_DIR: join(work, `serve-${name}-cfg`), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: providerUrl, NO_COLOR: '1' };
  const key = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' }).stdout.trim();
  const serve = await startServe(bin, env);
  const messages = [
    { role: 'system', content: 'Tell gentle stories about Lily and Tom.' },
    { role: 'user', content: 'Lily and Tom went to the park with a big red ball.' },
  ];
  const direct: number[] = [];
  const through: number[] = [];
  const proxied: number[] = [];
  try {
    const body = { model: 'mgpt-1-27b', messages, max_tokens: 16, stream: false };
    for (let i = 0; i < 3; i++) {
      await timed(`${providerUrl}/chat/completions`, body);
      await timed(`${serve.url}/v1/chat/completions`, body, key);
      await timed(`${proxy.url}/v1/chat/completions`, body);
    }
    for (let i = 0; i < runs; i++) {
      direct.push(await timed(`${providerUrl}/chat/completions`, body));
      through.push(await timed(`${serve.url}/v1/chat/completions`, body, key));
      proxied.push(await timed(`${proxy.url}/v1/chat/completions`, body));
    }
  } finally {
    serve.child.kill('SIGTERM');
    proxy.child.kill('SIGTERM');
  }
  const added = through.map((t, i) => t - direct[i]);
  const proxyAdded = proxied.map((t, i) => t - direct[i]);
  return { directMs: median(direct), serveMs: median(through), addedMs: median(added), proxyAddedMs: median(proxyAdded) };
}
