import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalBackend } from '../../src/backends/local.js';
import { RemoteBackend } from '../../src/backends/remote/remote-backend.js';
import type { Backend, LocalAdmin } from '../../src/core/backend.js';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import type { FakeOpenAI } from '../helpers/fake-openai.js';

export interface ContractTarget {
  kind: 'local' | 'remote';
  backend: Backend;
  /** The local administration beside the backend: only the local backend has one. */
  admin?: LocalAdmin;
  /** The engine behind the backend (the server's, for remote): for setup a client cannot do. */
  engine: Engine;
  close(): Promise<void>;
}

export const CONTRACT_LIMITS = { windowBudget: 200, transcriptCap: 2_000 };
export const PROMPT_TEXT = 'You narrate the contract. CONTRACT-PROMPT-MARKER.';

function engineFor(dir: string, fake: FakeOpenAI): Engine {
  const prompts = join(dir, 'prompts');
  mkdirSync(prompts, { recursive: true });
  writeFileSync(join(prompts, 'narrator.md'), PROMPT_TEXT + '\n');
  return makeEngine(dir, { fake, promptsDir: prompts, ...CONTRACT_LIMITS });
}

export async function localTarget(dir: string, fake: FakeOpenAI): Promise<ContractTarget> {
  const engine = engineFor(dir, fake);
  const backend = new LocalBackend(engine);
  return { kind: 'local', backend, admin: backend.admin, engine, close: async () => engine.close() };
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
    server,
    close: async () => {
      await server.close();
      engine.close();
    },
  };
}
