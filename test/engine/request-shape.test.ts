import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { alternates } from '../helpers/roles.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Property: whatever the budget, the sizes of messages and replies (an oversized reply
 * included) and the recall mode, every request an entity's turns make (replies, summaries) has
 * the one shape, and after every turn the live window starts with a user message.
 */
const dir = tempDir();
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

const WORDS = 'river boat garden sister Lisbon train lighthouse rose tea letter storm harbour'.split(' ');

describe('the request shape (property over budgets, sizes and recall)', () => {
  it('every request alternates from a user message after one system message, and every window starts with one', async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const next = rng(seed);
      const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
      const budget = 150 + Math.floor(next() * 900);
      const engine = makeEngine(dir, { fake });
      try {
        const recall = next() < 0.7 ? 'auto' : 'off';
        const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Be brief.', recall }, 'local');
        await engine.entities.update(e.id, { budget_tokens: budget }, 'local');
        if (next() < 0.5) await engine.memory.set(e.id, 'user', words(6), 'local');
        // Now and then a reply larger than half the budget: its span is folded whole with its question.
        fake.fallback = (body) => ({ text: isSummaryRequest(body) ? words(10) : words(next() < 0.1 ? Math.floor(budget * 0.6) : 3 + Math.floor(next() * 30)) });
        const from = fake.requests.length;
        for (let turn = 0; turn < 40; turn++) {
          const size = Math.min(Math.floor(budget / 3), 2 + Math.floor(next() * 40));
          await collect(engine.entities.send(e.id, { content: words(size) }, 'local'));
          const w = await engine.entities.window(e.id, 'local');
          expect(w.blocks.find((b) => b.kind === 'message')?.role, `seed ${seed} turn ${turn}`).toBe('user');
        }
        for (const r of fake.requests.slice(from)) {
          const roles = r.body.messages.map((m: { role: string }) => m.role);
          expect(alternates(r.body.messages), `seed ${seed}, budget ${budget}: ${roles.join(' ')}`).toBe(true);
          expect(roles.filter((x: string) => x === 'system').length, `seed ${seed}`).toBeLessThanOrEqual(1);
        }
      } finally {
        engine.close();
      }
    }
  }, 120_000);
});
