// mgpt serve: buffered message throughput against bare node:http, and the latency it adds to the first token.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';

export interface ServeBench {
  serveRps: number;
  bareRps: number;
  ratio: number;
  firstTokenAddedMs: number;
  firstTokenP95Ms: number;
}

function startChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve({ child, url: String(d).trim() }));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
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

/** Requests per second with `workers` sequential loops (one entity each: writes to one entity are serialized). */
async function rps(urls: string[], key: string, seconds: number): Promise<number> {
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    urls.map(async (url) => {
      while (performance.now() < end) {
        await post(url, key, { content: `message ${n}`, stream: false });
        n++;
      }
    }),
  );
  return n / seconds;
}

export async function benchServe(root: string, work: string, quick: boolean): Promise<ServeBench> {
  const bin = join(root, 'bin', 'mgpt');
  const fake = await startFakeOpenAI();
  const env = { ...process.env, MGPT_DB: join(work, 'serve.db'), MGPT_CONFIG_DIR: join(work, 'serve-cfg'), NO_COLOR: '1' };
  const key = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' }).stdout.trim();
  const workers = 8;
  const seconds = quick ? 2 : 5;

  // Throughput with the echo provider, against bare node:http answering the same JSON.
  const serve = await startChild(process.execPath, [bin, 'serve', '--port', '0'], env);
  const entities: string[] = [];
  for (let i = 0; i < workers; i++) entities.push((await post(`${serve.url}/v1/entities`, key, { model: 'mgpt-1-27b' })).id);
  await rps(entities.map((id) => `${serve.url}/v1/entities/${id}/messages`), key, 1); // warm-up
  const serveRps = await rps(entities.map((id) => `${serve.url}/v1/entities/${id}/messages`), key, seconds);
  serve.child.kill('SIGTERM');
  const bare = await startChild(process.execPath, [join(root, 'bench', 'bare-server.mjs')], env);
  await rps(Array(workers).fill(bare.url), key, 1);
  const bareRps = await rps(Array(workers).fill(bare.url), key, seconds);
  bare.child.kill('SIGTERM');

  // First-token latency: the fake provider notes when it writes the first token; the client, when
  // the first chunk arrives. Same process, same clock; the difference is what the server adds.
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
  const added: number[] = [];
  fake.fallback = () => ({ text: ['first', ' second'], delayMs: 20 });
  for (let i = 0; i < (quick ? 20 : 60); i++) {
    const res = await request(`${routed.url}/v1/entities/${id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key2}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: `turn ${i}` }),
    });
    let got = 0;
    for await (const piece of res.body) if (!got && String(piece).includes('"content":"first"')) got = performance.now();
    const sent = fake.firstTokenAt.at(-1);
    if (got && sent) added.push(got - sent);
  }
  routed.child.kill('SIGTERM');
  await fake.close();
  added.sort((a, b) => a - b);
  return {
    serveRps,
    bareRps,
    ratio: serveRps / bareRps,
    firstTokenAddedMs: added[Math.floor(added.length / 2)] ?? NaN,
    firstTokenP95Ms: added[Math.floor(added.length * 0.95)] ?? NaN,
  };
}

