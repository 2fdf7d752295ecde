import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai.js';
import { cliEnv, mgpt, spawnMgpt } from './cli.js';
import { tempDir } from './temp.js';

/** The real `mgpt serve` process (the built bin/mgpt) on loopback, its provider the scripted fake, and a key for it. */
export interface SpawnedServe {
  fake: FakeOpenAI;
  url: string;
  key: string;
  env: Record<string, string>;
  /** POST or GET on the server with the key, JSON in and out. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: any }>;
}

/** Starts them before the file's tests and stops them after; `env` adds to serve's environment (a window budget...). */
export function spawnedServe(extra: Record<string, string> = {}): SpawnedServe {
  const s = {} as SpawnedServe;
  let server: ReturnType<typeof spawnMgpt> | undefined;
  beforeAll(async () => {
    s.fake = await startFakeOpenAI();
    const dir = tempDir('mgpt-spawned-');
    s.env = cliEnv(join(dir, 'home'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: s.fake.url, MGPT_PROVIDER_KEY: 'sk-fake', ...extra });
    s.key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create,mgpt.logs:read'], s.env)).stdout.trim();
    server = spawnMgpt(['serve', '--port', '0'], s.env);
    s.url = await new Promise<string>((resolve, reject) => {
      server!.stdout!.once('data', (d) => resolve(String(d).trim()));
      void server!.result.then((r) => reject(new Error(`mgpt serve exited: ${r.stderr}`)));
    });
    s.api = async (method, path, body) => {
      const res = await fetch(`${s.url}${path}`, {
        method, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
    };
  }, 60_000);
  afterAll(async () => {
    server?.kill('SIGTERM');
    await server?.result;
    await s.fake?.close();
  });
  return s;
}
