// Search under load (issue 31): /healthz's wait while 10 worst-case searches run against one
// `mgpt serve` process on SQLite: six hits of ~0.4 MB each, half the searches a 250-prefix query
// (999 characters), half a word in every tenth place of every hit.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { openEngine } from '../src/engine/open-engine.js';
import type { MessageRow } from '../src/store/types.js';
import { startChild } from './serve.js';
import { MANY_PREFIXES, largeMessage } from '../test/helpers/search-corpus.js';

export interface SearchLoadBench {
  /** /healthz's waits while the searches ran, over all rounds. */
  healthzMaxMs: number;
  healthzMedianMs: number;
  probes: number;
  /** How long the 10 searches took, median over the rounds. */
  roundMs: number;
}


/** The database: one entity with the six large messages, and a key. */
async function seed(db: string): Promise<string> {
  const engine = await openEngine({ db });
  const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  const at = new Date().toISOString();
  const messages: MessageRow[] = Array.from({ length: 6 }, (_, i) => ({ seq: i + 1, role: i % 2 ? 'assistant' : 'user', content: largeMessage(i), tokens: 100_000, createdAt: at }));
  await engine.store.entities.importEntity({
    entity: {
      id: randomUUID(), accountId: 'local', name: 'large', instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none',
      budgetTokens: 32_000, capTokens: 10_000_000, transcriptMessages: 6, transcriptTokens: 600_000, windowTokens: 0, windowBlocks: 0, createdAt: at, updatedAt: at,
    },
    messages, blocks: [], keepIds: true,
  });
  await engine.close();
  return key;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** `rounds` rounds of 10 concurrent searches, /healthz asked again and again on a connection of its own meanwhile. */
export async function benchSearchLoad(bin: string, work: string, rounds: number): Promise<SearchLoadBench> {
  const db = join(work, 'search-load.db');
  const key = await seed(db);
  const env = { ...process.env, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, 'search-load-cfg'), NO_COLOR: '1' };
  const { child, url } = await startChild(process.execPath, [bin, 'serve', '--port', '0', '--log-format', 'off'], env);
  const probe = new Agent({ connections: 1 });
  const searches = new Agent({ connections: 10 });
  const get = async (path: string, dispatcher: Agent, headers: Record<string, string> = {}) => {
    const res = await request(`${url}${path}`, { dispatcher, headers });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
  };
  const waits: number[] = [];
  const roundTimes: number[] = [];
  try {
    await get('/healthz', probe);
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      let done = false;
      const all = Promise.all(Array.from({ length: 10 }, (_, i) => get(`/v1/search?limit=100&q=${encodeURIComponent(i % 2 ? MANY_PREFIXES : 'harbour')}`, searches, { authorization: `Bearer ${key}` }))).finally(() => (done = true));
      while (!done) {
        const p0 = performance.now();
        await get('/healthz', probe);
        waits.push(performance.now() - p0);
      }
      await all;
      roundTimes.push(performance.now() - t0);
    }
  } finally {
    child.kill('SIGTERM');
    await Promise.all([probe.close(), searches.close()]);
  }
  return { healthzMaxMs: Math.max(...waits), healthzMedianMs: median(waits), probes: waits.length, roundMs: median(roundTimes) };
}
