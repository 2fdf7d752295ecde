import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { BlockRow } from '../../src/store/types.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

/** A store whose window rows count every read of their token estimate. */
function countingStore(path: string): { store: SqliteStore; reads: () => number } {
  const store = SqliteStore.open(path);
  let reads = 0;
  const window = store.entities.window.bind(store.entities);
  store.entities.window = async (id: string) =>
    (await window(id)).map((b): BlockRow => {
      const { tokens, ...rest } = b;
      return Object.defineProperty({ ...rest } as BlockRow, 'tokens', {
        enumerable: true,
        get: () => {
          reads++;
          return tokens;
        },
      });
    });
  return { store, reads: () => reads };
}

describe('the kept window', () => {
  it('a turn does not walk the window: after the first, no stored block is read again', async () => {
    const path = join(dir, 'flat.db');
    const seeding = openEngineSync({ db: path, windowBudget: 1_000_000 });
    const e = await seeding.entities.create({ model: 'mgpt-1-27b', instructions: 'Be brief.', recall: 'off' }, 'local');
    for (let i = 0; i < 150; i++) await collect(seeding.entities.send(e.id, { content: `message ${i}` }, 'local'));
    await seeding.close();

    const { store, reads } = countingStore(path);
    const engine = openEngineSync({ db: store, windowBudget: 1_000_000 });
    await collect(engine.entities.send(e.id, { content: 'first turn of this process' }, 'local'));
    const afterFirst = reads();
    expect(afterFirst).toBeGreaterThan(0); // the window was read (and summed) once
    for (let i = 0; i < 5; i++) await collect(engine.entities.send(e.id, { content: `later ${i}` }, 'local'));
    expect(reads()).toBe(afterFirst);
    expect((await engine.entities.window(e.id, 'local')).blocks).toHaveLength(300 + 12);
    await engine.close();
  });

  it('the prompt from the kept window equals the one built from the stored window, across rotations', async () => {
    const engine = makeEngine(dir, { fake, windowBudget: 300 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a careful companion.', recall: 'off' }, 'local');
    let rotations = 0;
    for (let i = 0; i < 40; i++) {
      fake.fallback = () => ({ text: `reply ${i}: ${'words of a reply '.repeat(1 + (i % 5))}` });
      const stored = (await engine.entities.window(e.id, 'local')).blocks;
      const before = fake.requests.length;
      const events = await collect(engine.entities.send(e.id, { content: `message ${i} ${'about the garden '.repeat(1 + (i % 7))}` }, 'local'));
      if (events.some((ev) => ev.type === 'rotation')) {
        rotations++;
        continue; // the prompt then starts from the new summary
      }
      const body = fake.requests[before].body as { messages: Array<{ role: string; content: string }> };
      // One system message: the instructions, then the summary joined into it.
      const summaries = stored.filter((b) => b.kind === 'summary').map((b) => b.content);
      expect(body.messages).toEqual([
        { role: 'system', content: ['You are a careful companion.', ...summaries].join('\n\n') },
        ...stored.filter((b) => b.kind === 'message').map((b) => ({ role: b.role, content: b.content })),
        { role: 'user', content: `message ${i} ${'about the garden '.repeat(1 + (i % 7))}` },
      ]);
    }
    expect(rotations).toBeGreaterThan(1);
    await engine.close();
  });
});
