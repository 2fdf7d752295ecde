// The Responses API on `mgpt serve`: what serve adds to one stored response over the model, by
// the floor method of serve-llama.ts (the same request to the provider directly, through serve,
// and through a bare forwarding process, interleaved), and what a 100-response
// previous_response_id chain costs a real llama-server against the same turns sent to an entity.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openEngineSync } from '../src/engine/open-engine.js';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { llamaServerParts, startLlamaServer } from '../test/helpers/llama-server.js';
import { type Timed, recordingProxy } from '../test/helpers/recording-proxy.js';
import { costOf, messages } from './rotation-cache.js';
import { startProxy, startServe, timed } from './serve-llama.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export interface ResponsesFloor {
  directMs: number;
  serveMs: number;
  addedMs: number;
  proxyAddedMs: number;
}

function serveEnv(work: string, name: string, providerUrl: string): NodeJS.ProcessEnv {
  return { ...process.env, MGPT_DB: join(work, `responses-${name}-${Date.now()}.db`), MGPT_CONFIG_DIR: join(work, `responses-${name}-cfg`), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: providerUrl, MGPT_PROVIDER_MODEL: 'stories', NO_COLOR: '1' };
}

function keyFor(bin: string, env: NodeJS.ProcessEnv): string {
  return spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' }).stdout.trim();
}

async function post(url: string, key: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

/** A stored response continuing a chain, against the scripted fake: serve's own work a response. */
export async function benchResponsesFloor(root: string, work: string, runs: number): Promise<ResponsesFloor> {
  const fake = await startFakeOpenAI();
  fake.fallback = () => ({ text: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen', delayMs: 12, usage: { prompt_tokens: 100, completion_tokens: 16 } });
  const proxy = await startProxy(root, fake.url);
  const bin = join(root, 'bin', 'mgpt');
  const env = { ...serveEnv(work, 'floor', fake.url), MGPT_WINDOW_BUDGET: '4000' };
  const key = keyFor(bin, env);
  const serve = await startServe(bin, env);
  const chat = { model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'Lily and Tom went to the park.' }], max_tokens: 16, stream: false };
  const [direct, through, proxied]: number[][] = [[], [], []];
  try {
    await post(`${serve.url}/v1/entities`, key, { model: 'mgpt-1-27b', name: 'bench' });
    let prev: string | undefined;
    const respond = async () => {
      const t0 = performance.now();
      prev = (await post(`${serve.url}/v1/responses`, key, { model: 'entity:bench', input: 'Lily and Tom went to the park.', ...(prev ? { previous_response_id: prev } : {}) })).id;
      return performance.now() - t0;
    };
    for (let i = 0; i < 3; i++) await respond();
    for (let i = 0; i < runs; i++) {
      direct.push(await timed(`${fake.url}/chat/completions`, chat));
      through.push(await respond());
      proxied.push(await timed(`${proxy.url}/v1/chat/completions`, chat));
    }
  } finally {
    serve.child.kill('SIGTERM');
    proxy.child.kill('SIGTERM');
    await fake.close();
  }
  return { directMs: median(direct), serveMs: median(through), addedMs: median(through.map((t, i) => t - direct[i])), proxyAddedMs: median(proxied.map((t, i) => t - direct[i])) };
}

export interface ChainCost {
  processedPerTurn: number;
  newPerTurn: number;
  entityProcessedPerTurn: number;
  entityNewPerTurn: number;
  failures: number;
}

/** `turns` responses chained by previous_response_id through serve, then the same messages as turns of an entity in the engine; null without llama-server. */
export async function benchResponsesChain(root: string, work: string, turns: number): Promise<ChainCost | null> {
  const parts = llamaServerParts();
  if (!parts) return null;
  const server = await startLlamaServer(parts, ['-c', '2048', '-np', '1', '--temp', '0', '-n', '64']);
  try {
    const chain = await throughServe(root, work, server.origin, turns);
    const entity = await throughEngine(work, server.origin, turns);
    return { processedPerTurn: chain.processedPerTurn, newPerTurn: chain.newPerTurn, entityProcessedPerTurn: entity.processedPerTurn, entityNewPerTurn: entity.newPerTurn, failures: chain.failures + entity.failures };
  } finally {
    await server.stop();
  }
}

const INSTRUCTIONS = 'Tell gentle stories about Lily and Tom.';

async function throughServe(root: string, work: string, origin: string, turns: number) {
  const seen: Timed[] = [];
  const proxy = await recordingProxy(origin, seen);
  const bin = join(root, 'bin', 'mgpt');
  const env = serveEnv(work, 'chain', `${proxy.origin}/v1`);
  const key = keyFor(bin, env);
  const serve = await startServe(bin, env);
  let failures = 0;
  try {
    await post(`${serve.url}/v1/entities`, key, { model: 'mgpt-1-27b', name: 'chain', instructions: INSTRUCTIONS });
    const next = messages(2048);
    let prev: string | undefined;
    for (let i = 0; i < turns; i++) {
      const input = next();
      try {
        prev = (await post(`${serve.url}/v1/responses`, key, { model: 'entity:chain', input, ...(prev ? { previous_response_id: prev } : {}) })).id;
      } catch {
        failures++;
      }
    }
  } finally {
    serve.child.kill('SIGTERM');
    proxy.close();
  }
  return costOf(2048, turns, seen, failures);
}

async function throughEngine(work: string, origin: string, turns: number) {
  const seen: Timed[] = [];
  const proxy = await recordingProxy(origin, seen);
  const engine = openEngineSync({ db: join(work, `responses-entity-${Date.now()}.db`), route: () => ({ provider: 'openai', baseUrl: `${proxy.origin}/v1`, model: 'stories', maxRetries: 0 }) });
  let failures = 0;
  try {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: INSTRUCTIONS }, 'local');
    const next = messages(2048);
    for (let i = 0; i < turns; i++) {
      try {
        for await (const _ of engine.entities.send(e.id, { content: next() }, 'local'));
      } catch {
        failures++;
      }
    }
  } finally {
    engine.close();
    proxy.close();
  }
  return costOf(2048, turns, seen, failures);
}
