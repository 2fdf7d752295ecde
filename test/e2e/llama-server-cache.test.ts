import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, done } from '../helpers/engine.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { type Timed, recordingProxy } from '../helpers/recording-proxy.js';
import { tempDir } from '../helpers/temp.js';

const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-cache-');
const INSTRUCTIONS = 'Tell gentle stories about Lily and Tom.';
const WORDS = 'Lily Tom the big red ball park sun dog cat tree house played ran jumped happy friend little girl boy said looked found'.split(' ');
const message = (i: number) => Array.from({ length: 14 + (i % 9) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');

const servers: LlamaServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

/** An engine routed through a recording proxy to `server`, with nothing configured about the model. */
async function routed(server: LlamaServer, seen: Timed[], db: string): Promise<{ engine: Engine; close(): void }> {
  const proxy = await recordingProxy(server.origin, seen);
  const engine = openEngineSync({ db, route: () => ({ provider: 'openai', baseUrl: `${proxy.origin}/v1`, model: 'stories', maxRetries: 0 }) });
  return { engine, close: () => (engine.close(), proxy.close()) };
}

async function tokens(server: LlamaServer, content: string): Promise<number> {
  const res = await fetch(`${server.origin}/tokenize`, { method: 'POST', body: JSON.stringify({ content }) });
  return ((await res.json()) as { tokens: number[] }).tokens.length;
}

describe.skipIf(!parts)('rotation against the real llama-server keeps its prompt cache warm', () => {
  it('a summary request is served from the cache for its span, and the turn after it reuses the instructions', async () => {
    const server = await startLlamaServer(parts!, ['-c', '2048', '-np', '1', '--temp', '0', '-n', '48']);
    servers.push(server);
    const seen: Timed[] = [];
    const { engine, close } = await routed(server, seen, `${dir}/cache.db`);
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: INSTRUCTIONS, recall: 'off' }, 'local');
    let rotations = 0;
    for (let i = 0; rotations < 3 && i < 80; i++) {
      const before = seen.length;
      const events = await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
      const rotation = events.find((x) => x.type === 'rotation');
      if (rotation) rotations++;
      // The turn's usage says what the server's cache served, as its own timings do; so does its summary's.
      expect(done(events).completion.usage.prompt_tokens_details).toEqual({ cached_tokens: seen.at(-1)!.cacheN });
      const folds = seen.slice(before).filter((t) => t.summary);
      if (rotation) expect(rotation.summaryUsage?.prompt_tokens_details).toEqual({ cached_tokens: folds.reduce((n, t) => n + t.cacheN, 0) });
    }
    close();
    expect(rotations).toBe(3);
    const instructionTokens = await tokens(server, INSTRUCTIONS);
    // The first rotation follows the overflow that taught the context; the later ones are the steady state.
    const summaries = seen.flatMap((t, i) => (t.summary ? [i] : [])).slice(-2);
    for (const i of summaries) {
      const s = seen[i];
      const prompt = s.promptN + s.cacheN;
      // Afresh: the fold request, the last reply and the template around them; the span came from the cache.
      expect(s.promptN, JSON.stringify({ promptN: s.promptN, cacheN: s.cacheN })).toBeLessThanOrEqual(250);
      expect(s.cacheN).toBeGreaterThanOrEqual(prompt - 250);
      const after = seen[i + 1];
      expect(after.summary).toBe(false);
      expect(after.cacheN).toBeGreaterThanOrEqual(instructionTokens);
    }
  });

  it("uses a server's larger context within a few turns after a smaller one was learned from it", async () => {
    const small = await startLlamaServer(parts!, ['-c', '1024', '-np', '1', '--temp', '0', '-n', '48']);
    servers.push(small);
    const port = Number(new URL(small.origin).port);
    const seen: Timed[] = [];
    const { engine, close } = await routed(small, seen, `${dir}/grow.db`);
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: INSTRUCTIONS, recall: 'off' }, 'local');
    const route = (await engine.deps.chatModel('mgpt-1-27b')).routeKey;
    let i = 0;
    for (; i < 60 && !(await engine.store.calibration.get(route))?.contextTokens; i++) {
      await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    }
    expect(await engine.store.calibration.get(route)).toMatchObject({ contextTokens: 1024, contextSource: 'server' });
    // Ten more turns on the small server: prompts stay within it.
    for (let k = 0; k < 10; k++, i++) {
      const c = done(await collect(engine.entities.send(e.id, { content: message(i) }, 'local'))).completion;
      expect(c.usage.prompt_tokens).toBeLessThan(1024);
    }
    // The same server restarted with twice the context, on the same address.
    await small.stop();
    servers.push(await startLlamaServer(parts!, ['-c', '2048', '-np', '1', '--temp', '0', '-n', '48'], port));
    let largest = 0;
    let turns = 0;
    for (; turns < 20 && largest <= 1024; turns++, i++) {
      const c = done(await collect(engine.entities.send(e.id, { content: message(i) }, 'local'))).completion;
      largest = Math.max(largest, c.usage.prompt_tokens);
    }
    close();
    // The window grew past the old context: what was learned was tested again and let go.
    expect(largest).toBeGreaterThan(1024);
    expect(turns).toBeLessThanOrEqual(12);
  });
});
