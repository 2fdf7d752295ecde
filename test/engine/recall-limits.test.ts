import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { RECALL_CALLS_MAX } from '../../src/engine/entities/recall.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, type ScriptedReply, echoLastUser, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// Issue 31, finding 5: a recall query had no length limit (a 1 MiB one froze the process for
// minutes: the store's cost for a long AND grows faster than its length), nor did a reply's calls.
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
let searches = 0;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  engine = makeEngine(dir, { fake });
  // Counts the store's searches: a refused call must never reach it.
  const search = engine.store.entities.termMatches.bind(engine.store.entities);
  engine.store.entities.termMatches = (q) => (searches++, search(q));
});
afterAll(async () => {
  engine.close();
  await fake.close();
});

/** One turn of an entity with recall on, whose model answers with `calls` first; returns the request after the round. */
async function turnWith(calls: ScriptedReply['toolCalls']): Promise<any> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: true }, 'local');
  await collect(engine.entities.send(e.id, { content: 'The secret word is zanzibar42.' }, 'local'));
  const requests: any[] = [];
  fake.fallback = (body) => {
    if (isSummaryRequest(body)) return echoLastUser(body);
    requests.push(body);
    return body.messages.at(-1).role === 'tool' ? { text: 'I looked.' } : { toolCalls: calls };
  };
  searches = 0;
  try {
    await collect(engine.entities.send(e.id, { content: 'What was the secret word?' }, 'local'));
  } finally {
    fake.fallback = echoLastUser;
  }
  expect(requests).toHaveLength(2);
  return requests[1];
}

const toolMessages = (body: any) => body.messages.filter((m: any) => m.role === 'tool');

describe('recall limits', () => {
  it('refuses a query over 1,000 characters with a result the model reads, before parsing or searching it (1 MiB too)', async () => {
    const over = await turnWith([{ id: 'c1', name: 'recall', arguments: JSON.stringify({ query: 'x'.repeat(1001) }) }]);
    expect(toolMessages(over)).toEqual([{ role: 'tool', tool_call_id: 'c1', content: "recall's query is 1001 characters; the limit is 1000" }]);
    expect(searches).toBe(0);
    // A megabyte of different words: before, minutes of the store's work on the event loop.
    const words = Array.from({ length: 150_000 }, (_, i) => `w${i}`).join(' ');
    const args = JSON.stringify({ query: words });
    expect(args.length).toBeGreaterThan(1024 * 1024);
    const huge = await turnWith([{ id: 'c2', name: 'recall', arguments: args }]);
    expect(toolMessages(huge)).toEqual([{ role: 'tool', tool_call_id: 'c2', content: `recall's query is over 1000 characters (its arguments are ${args.length}); the limit is 1000` }]);
    expect(searches).toBe(0);
    // The call is repeated to the model without its megabyte; its result says why.
    expect(huge.messages.at(-2).tool_calls).toEqual([{ id: 'c2', type: 'function', function: { name: 'recall', arguments: '{}' } }]);
    // A query at the limit is searched.
    const at = await turnWith([{ id: 'c3', name: 'recall', arguments: JSON.stringify({ query: `secret ${'y'.repeat(993)}` }) }]);
    expect(toolMessages(at)[0].content).toMatch(/^nothing earlier in the conversation matches/);
    expect(searches).toBe(1);
  }, 60_000);

  it(`runs at most ${RECALL_CALLS_MAX} calls of a reply and answers each of the rest with an error (2,000 calls)`, async () => {
    const calls = Array.from({ length: 2000 }, (_, i) => ({ id: `r${i}`, name: 'recall', arguments: '{"query":"secret word"}' }));
    const body = await turnWith(calls);
    expect(searches).toBe(RECALL_CALLS_MAX);
    const results = toolMessages(body);
    expect(results.map((m: any) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(results.slice(0, RECALL_CALLS_MAX).every((m: any) => !m.content.startsWith('not run'))).toBe(true);
    for (const m of results.slice(RECALL_CALLS_MAX)) expect(m.content).toBe(`not run: recall takes at most ${RECALL_CALLS_MAX} calls a round, and this reply made 2000`);
  }, 60_000);
});
