import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalBackend } from '../../src/backends/local.js';
import { RemoteBackend } from '../../src/backends/remote/remote-backend.js';
import type { Backend, LocalAdmin } from '../../src/core/backend.js';
import type { Engine, EngineOptions } from '../../src/engine/engine.js';
import { openEngine, openEngineSync } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine, sqliteOf } from '../helpers/engine.js';
import type { FakeOpenAI } from '../helpers/fake-openai.js';

export interface ContractTarget {
  kind: 'local' | 'remote';
  backend: Backend;
  /** The local administration beside the backend: only the local backend has one. */
  admin?: LocalAdmin;
  /** The engine behind the backend (the server's, for remote): for setup a client cannot do. */
  engine: Engine;
  /** The stored prompts the server's engines create universes from. */
  promptsDir: string;
  /** Another engine on the same database, as another process would have (its own connections). */
  otherEngine(route: EngineOptions['route']): Promise<Engine>;
  close(): Promise<void>;
}

export const CONTRACT_LIMITS = { windowBudget: 200, transcriptCap: 2_000 };
export const PROMPT_TEXT = 'You narrate the contract. CONTRACT-PROMPT-MARKER.';

export function promptsIn(dir: string): string {
  const prompts = join(dir, 'prompts');
  mkdirSync(prompts, { recursive: true });
  writeFileSync(join(prompts, 'narrator.md'), PROMPT_TEXT + '\n');
  return prompts;
}

function engineFor(dir: string, fake: FakeOpenAI): Engine {
  return makeEngine(dir, { fake, promptsDir: promptsIn(dir), ...CONTRACT_LIMITS });
}

/** For SQLite: another engine on the same file. */
const sqliteTwin = (engine: Engine) => async (route: EngineOptions['route']) => openEngineSync({ db: sqliteOf(engine).db.name, route });

export async function localTarget(dir: string, fake: FakeOpenAI): Promise<ContractTarget> {
  const engine = engineFor(dir, fake);
  const backend = new LocalBackend(engine);
  return { kind: 'local', backend, admin: backend.admin, engine, promptsDir: join(dir, 'prompts'), otherEngine: sqliteTwin(engine), close: async () => engine.close() };
}

/** The remote backend against mgpt serve on a real 127.0.0.1 port, with a key of every scope. */
export async function remoteTarget(dir: string, fake: FakeOpenAI): Promise<ContractTarget & { server: Listening }> {
  const engine = engineFor(dir, fake);
  const key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read'])).key!;
  const server = await listen(engine, '127.0.0.1', 0);
  const backend = new RemoteBackend({
    baseUrl: server.url,
    entitiesUrl: `${server.url}/v1`,
    apiKey: key,
    userId: (await engine.accounts.find('local')).userId,
    retryBaseMs: 10,
  });
  return {
    kind: 'remote',
    backend,
    engine,
    promptsDir: join(dir, 'prompts'),
    otherEngine: sqliteTwin(engine),
    server,
    close: async () => {
      await server.close();
      engine.close();
    },
  };
}

/**
 * Each call goes to the next backend in turn: with two RemoteBackends on two replicas, every
 * request lands on the other replica from the one before it (a round-robin load balancer).
 */
export function alternating(backends: Backend[]): Backend {
  let next = 0;
  return new Proxy(backends[0], {
    get(target, prop) {
      const own = Reflect.get(target, prop) as unknown;
      if (typeof own !== 'function') return own;
      return (...args: unknown[]) => {
        const b = backends[next++ % backends.length] as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>;
        return b[prop](...args);
      };
    },
  });
}

/** A replica: an engine of its own (its own pool) on the shared PostgreSQL database, on its own port. */
export async function replica(url: string, fake: FakeOpenAI | undefined, promptsDir: string, extra: Partial<EngineOptions> = {}): Promise<{ engine: Engine; server: Listening }> {
  const route: EngineOptions['route'] = () => (fake ? { provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 } : { provider: 'echo' });
  const engine = await openEngine({ db: url, poolSize: 4, route, promptsDir, ...CONTRACT_LIMITS, ...extra });
  return { engine, server: await listen(engine, '127.0.0.1', 0) };
}

/** The remote backend against TWO mgpt serve replicas on one PostgreSQL database, requests alternating. */
export async function replicasTarget(dir: string, fake: FakeOpenAI, url: string): Promise<ContractTarget & { server: Listening }> {
  const promptsDir = promptsIn(dir);
  const replicas = [await replica(url, fake, promptsDir), await replica(url, fake, promptsDir)];
  const engine = replicas[0].engine;
  const key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read'])).key!;
  const userId = (await engine.accounts.find('local')).userId;
  const backends = replicas.map(
    ({ server }) => new RemoteBackend({ baseUrl: server.url, entitiesUrl: `${server.url}/v1`, apiKey: key, userId, retryBaseMs: 10 }),
  );
  return {
    kind: 'remote',
    backend: alternating(backends),
    engine,
    promptsDir,
    // The intruder case talks to one replica directly: the second one.
    server: replicas[1].server,
    otherEngine: (route) => openEngine({ db: url, poolSize: 2, route }),
    close: async () => {
      for (const r of replicas) {
        await r.server.close();
        await r.engine.close();
      }
    },
  };
}
