import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WindowBlock } from '../../src/core/wire/entity-types.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI, isSummaryRequest } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the quick brown fox jumps over a lazy dog while seven wizards quietly hum old songs about rivers'.split(' ');

describe('rotation (property, 500 turns)', () => {
  it('keeps the window invariant, the budget, recursive summaries and an untouched transcript', async () => {
    const budget = 400;
    const engine = makeEngine(dir, { fake, windowBudget: budget });
    const tok = await loadTokenEstimator();
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a careful companion.', recall: 'off' }, 'local');
    const rand = rng(20261122);
    const text = (maxWords: number) => Array.from({ length: 1 + Math.floor(rand() * maxWords) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
    const expected: Array<{ role: string; content: string }> = [];
    let previousSummary: [number, number] | null = null;
    let rotations = 0;
    let summaryRequests = 0;
    let previousReplyRequest: any = null;

    fake.fallback = (body) => {
      const isSummary = isSummaryRequest(body);
      if (isSummary) {
        summaryRequests++;
        // Sometimes far too long: the engine must cut it to a quarter of the budget.
        return { text: text(rand() < 0.2 ? 400 : 40) };
      }
      return { text: text(90) };
    };
    try {
      for (let turn = 1; turn <= 500; turn++) {
        const message = text(rand() < 0.05 ? 300 : 60);
        const before = fake.requests.length;
        const events = await collect(engine.entities.send(e.id, { content: message }, 'local'));
        const done = events.find((x) => x.type === 'done');
        if (done?.type !== 'done') throw new Error('no done event');
        const reply = done.completion.choices[0].message.content;
        expected.push({ role: 'user', content: message }, { role: 'assistant', content: reply });

        const w = await engine.entities.window(e.id, 'local');
        const n = expected.length;
        // 1. The blocks cover 1..N exactly once, in order.
        expect(checkWindowInvariant(w.blocks, n), `turn ${turn}`).toBeNull();
        expect(w.tokens).toBe(w.blocks.reduce((t, b) => t + b.tokens, 0));
        for (const b of w.blocks) expect(b.tokens).toBe(tok.count(b.content));
        // 2. Within budget before generation: everything but the reply block.
        const beforeGeneration = w.blocks.slice(0, -1);
        expect(beforeGeneration.reduce((t, b) => t + b.tokens, 0), `turn ${turn}`).toBeLessThanOrEqual(budget);
        // 3. The provider saw exactly: one system message (instructions, then the summary), then those messages in order,
        // the live window starting with a user message (a fold ends after a reply).
        const replyRequest = fake.requests.at(-1)!.body;
        const summaries = beforeGeneration.filter((b: WindowBlock) => b.kind === 'summary').map((b: WindowBlock) => b.content);
        const live = beforeGeneration.filter((b: WindowBlock) => b.kind === 'message');
        expect(live[0].role, `turn ${turn}`).toBe('user');
        expect(replyRequest.messages).toEqual([
          { role: 'system', content: ['You are a careful companion.', ...summaries].join('\n\n') },
          ...live.map((b: WindowBlock) => ({ role: b.role, content: b.content })),
        ]);
        // 4. Summaries are recursive: a later one covers the range of the earlier one.
        const rotated = events.some((x) => x.type === 'rotation');
        expect(fake.requests.length - before).toBe(rotated ? 2 : 1);
        const summary = w.blocks.find((b) => b.kind === 'summary');
        if (rotated) {
          rotations++;
          expect(summary).toBeDefined();
          expect(summary!.tokens).toBeLessThanOrEqual(budget * 0.1);
          // 4a. After a rotation the whole window is at most a quarter of the budget (unless the new message alone is big).
          const newTokens = tok.count(message);
          if (newTokens <= budget * 0.15) expect(w.tokens - w.blocks.at(-1)!.tokens, `turn ${turn}`).toBeLessThanOrEqual(budget * 0.25);
          // 4b. The summary request starts with what the previous turn sent, so a prompt cache serves the span,
          // and it folds at least one message, never a summary alone.
          const summaryRequest = fake.requests.at(-2)!.body;
          const prefix = summaryRequest.messages.slice(0, -1);
          expect(summaryRequest.messages.at(-1).content).toMatch(/long-term memory/);
          // (The previous turn's prompt and its reply: a server's cache holds both.)
          const sentBefore = [...previousReplyRequest.messages, { role: 'assistant', content: expected.at(-3)!.content }];
          expect(sentBefore.slice(0, prefix.length)).toEqual(prefix);
          expect(prefix.some((m: any) => m.role !== 'system')).toBe(true);
          if (previousSummary) {
            expect(summary!.covers[0]).toBeLessThanOrEqual(previousSummary[0]);
            expect(summary!.covers[1]).toBeGreaterThan(previousSummary[1]);
          }
        }
        if (summary) previousSummary = summary.covers;
        previousReplyRequest = replyRequest;
        // 5. The transcript is untouched by rotation.
        const entity = await engine.entities.get(e.id, 'local');
        expect(entity.transcript.messages).toBe(n);
        if (turn % 50 === 0 || turn === 500) {
          const all = [];
          for (let after = 0; ; ) {
            const page = await engine.entities.messages(e.id, { after, limit: 500 }, 'local');
            all.push(...page.data);
            if (!page.has_more) break;
            after = page.next_after;
          }
          expect(all.map((m) => ({ role: m.role, content: m.content }))).toEqual(expected);
          expect(all.map((m) => m.seq)).toEqual(expected.map((_, i) => i + 1));
          expect(entity.transcript.tokens).toBe(all.reduce((t, m) => t + m.tokens, 0));
        }
      }
    } finally {
      fake.fallback = (await import('../helpers/fake-openai.js')).echoLastUser;
    }
    expect(rotations).toBeGreaterThan(50);
    expect(summaryRequests).toBe(rotations);
    engine.close();
  });
});
