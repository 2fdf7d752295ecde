import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/** POST /v1/entities/{id}/rotations whose client goes away during a slow summary: nothing is written (issue 33). */
const dir = tempDir('mgpt-rotate-cancel-');
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  engine = makeEngine(dir, { fake, windowBudget: 2000 });
  key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  server = await listen(engine, '127.0.0.1', 0);
});
afterAll(async () => {
  await server.close();
  await engine.close();
  await fake.close();
});

describe('a rotation request the client abandons', () => {
  it('stops the summary call and stores no rotation', async () => {
    fake.fallback = () => ({ text: 'ok, noted' });
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
    for (let i = 0; i < 6; i++) await collect(engine.entities.send(id, { content: `message ${i} about rivers` }, 'local'));
    const before = { rotations: await engine.entities.rotations(id, 'local'), window: await engine.entities.window(id, 'local') };
    let asked!: () => void;
    const summaryAsked = new Promise<void>((r) => (asked = r));
    fake.fallback = (body) => {
      if (!isSummaryRequest(body)) return { text: 'ok' };
      asked();
      return { text: 'a summary nobody waits for', delayMs: 800 };
    };
    const aborted = fake.aborted;
    const abort = new AbortController();
    const post = fetch(`${server.url}/v1/entities/${id}/rotations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'rotate' }),
      signal: abort.signal,
    });
    await summaryAsked;
    abort.abort();
    await expect(post).rejects.toThrow();
    // The server cancelled its summary request, and nothing is written after the late answer.
    await expect.poll(() => fake.aborted, { timeout: 3000 }).toBeGreaterThan(aborted);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await engine.entities.rotations(id, 'local')).toEqual(before.rotations);
    expect(await engine.entities.window(id, 'local')).toEqual(before.window);
  });
});
