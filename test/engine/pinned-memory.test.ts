import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { REMEMBER_CALLS_MAX } from '../../src/engine/entities/remember.js';
import { collect, done, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, echoLastUser, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/** Pinned memory (issue 33) on the embedded engine: what every prompt carries, the limits, and the remember tool. */
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  engine = makeEngine(dir, { fake, memoryBlocks: 4, memoryTokens: 200 });
});
afterAll(async () => {
  await engine.close();
  await fake.close();
});

const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

/** The chat requests (not summaries) since `from`. */
function chatPrompts(from: number): Array<Array<{ role: string; content: string }>> {
  return fake.requests.slice(from).filter((r) => !isSummaryRequest(r.body)).map((r) => r.body.messages);
}

async function entity(budget = 300): Promise<string> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are Ada.', recall: 'off' }, 'local');
  await engine.entities.update(e.id, { budget_tokens: budget }, 'local');
  return e.id;
}

describe('pinned memory in the prompt', () => {
  it('a block pinned at turn 1 is in every prompt of 100 turns with rotations, right after the instructions; the window stays the window', async () => {
    const id = await entity();
    await engine.memory.set(id, 'user', 'Ada lives in Porto and deploys on PostgreSQL 15', 'local');
    const from = fake.requests.length;
    let rotations = 0;
    for (let i = 0; i < 100; i++) {
      const events = await collect(engine.entities.send(id, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
      rotations += events.filter((e) => e.type === 'rotation').length;
    }
    expect(rotations).toBeGreaterThanOrEqual(5);
    const prompts = chatPrompts(from);
    expect(prompts).toHaveLength(100);
    // One system message: the instructions, then the memory (then any summary), joined.
    for (const p of prompts) {
      expect(p.filter((m: { role: string }) => m.role === 'system')).toHaveLength(1);
      expect(p[0].content.startsWith('You are Ada.\n\nPinned memory:\nuser: Ada lives in Porto and deploys on PostgreSQL 15')).toBe(true);
    }
    // A summary request is the conversation as a turn sent it, then the request to fold (the provider's cache serves the rest).
    const summaries = fake.requests.slice(from).filter((r) => isSummaryRequest(r.body) && r.body.messages.at(-1).role === 'user');
    expect(summaries.length).toBeGreaterThanOrEqual(5);
    for (const r of summaries) {
      const sent = r.body.messages.slice(0, -1);
      expect(prompts.some((p) => JSON.stringify(p.slice(0, sent.length)) === JSON.stringify(sent))).toBe(true);
    }
    // Never a window block: the window holds summaries and messages only, and none of them is the memory.
    const w = await engine.entities.window(id, 'local');
    expect(w.blocks.some((b) => b.content.includes('Pinned memory'))).toBe(false);
    expect(w.blocks[0].kind).toBe('summary');
  });

  it('a rotation the user asks for (fold now, resummarize) starts its summary request with the same prefix as a turn', async () => {
    const id = await entity(4000);
    await engine.memory.set(id, 'user', 'Ada lives in Porto', 'local');
    const from = fake.requests.length;
    for (let i = 0; i < 4; i++) await collect(engine.entities.send(id, { content: `${FILLER[i]}, day ${i}` }, 'local'));
    const head = chatPrompts(from)[0].slice(0, 1);
    expect(head).toEqual([{ role: 'system', content: 'You are Ada.\n\nPinned memory:\nuser: Ada lives in Porto' }]);
    for (const action of ['rotate', 'resummarize'] as const) {
      const before = fake.requests.length;
      await engine.entities.rotate(id, { action }, 'local');
      const summaries = fake.requests.slice(before).filter((r) => isSummaryRequest(r.body));
      expect(summaries.length, action).toBeGreaterThan(0);
      for (const r of summaries) expect(r.body.messages.slice(0, 1), action).toEqual(head);
    }
  });

  it('an edit applies from the next turn on; removing the last block sends exactly the prompt of an entity without memory', async () => {
    const id = await entity(4000);
    await engine.memory.set(id, 'b', 'two', 'local');
    await engine.memory.set(id, 'a', 'one', 'local');
    const from = fake.requests.length;
    await collect(engine.entities.send(id, { content: 'first' }, 'local'));
    await engine.memory.set(id, 'a', 'uno', 'local');
    await collect(engine.entities.send(id, { content: 'second' }, 'local'));
    await engine.memory.remove(id, 'a', 'local');
    await engine.memory.remove(id, 'b', 'local');
    await collect(engine.entities.send(id, { content: 'third' }, 'local'));
    const [p1, p2, p3] = chatPrompts(from);
    expect(p1[0].content).toBe('You are Ada.\n\nPinned memory:\na: one\nb: two');
    expect(p2[0].content).toBe('You are Ada.\n\nPinned memory:\na: uno\nb: two');
    expect(p3.filter((m) => m.role === 'system')).toEqual([{ role: 'system', content: 'You are Ada.' }]);
    expect(p3.map((m) => m.content)).toEqual(['You are Ada.', 'first', 'reply: first', 'second', 'reply: second', 'third']);
  });

  it('the limits refuse with a 400 and a hint, and change nothing', async () => {
    const id = await entity();
    for (const l of ['a', 'b', 'c', 'd']) await engine.memory.set(id, l, `block ${l}`, 'local');
    const before = [await engine.memory.list(id, 'local'), await engine.memory.history(id, 'local')];
    const refusals = [
      () => engine.memory.set(id, 'e', 'one too many', 'local'),
      () => engine.memory.set(id, 'a', 'word '.repeat(300), 'local'),
      () => engine.memory.set(id, 'bad label', 'x', 'local'),
      () => engine.memory.set(id, '', 'x', 'local'),
      () => engine.memory.set(id, 'a', '   ', 'local'),
      () => engine.memory.set(id, 'a', 42, 'local'),
    ];
    for (const refuse of refusals) {
      const err = await refuse().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).status).toBe(400);
      expect((err as BadRequestError).hint).toBeTruthy();
    }
    const full = await engine.memory.set(id, 'e', 'x', 'local').catch((e: Error) => e.message);
    expect(full).toBe('pinned memory is full: a block labelled "e" would make 5 blocks; the limit is 4; nothing was changed');
    expect([await engine.memory.list(id, 'local'), await engine.memory.history(id, 'local')]).toEqual(before);
    expect((await engine.memory.list(id, 'local')).limits).toEqual({ blocks: 4, tokens: 200 });
    // Another account's entity is not there.
    await expect(engine.memory.list(id, 'someone-else')).rejects.toMatchObject({ status: 404 });
  });
});

describe('the remember tool', () => {
  /** A turn whose model first calls remember with `args`, then answers; the requests it made. */
  async function rememberTurn(id: string, args: unknown[]): Promise<Array<{ body: any }>> {
    const from = fake.requests.length;
    let calls = 0;
    fake.fallback = (body) => {
      if (isSummaryRequest(body) || !body.tools) return echoLastUser(body);
      if (body.messages.at(-1).role === 'tool') return { text: 'Noted.' };
      return { toolCalls: args.map((a) => ({ id: `call-${++calls}`, name: 'remember', arguments: typeof a === 'string' ? a : JSON.stringify(a) })) };
    };
    try {
      const events = await collect(engine.entities.send(id, { content: 'I moved to Porto, remember that', memoryTool: true }, 'local'));
      expect(done(events).completion.choices[0].message.content).toBe('Noted.');
      return fake.requests.slice(from);
    } finally {
      fake.fallback = echoLastUser;
    }
  }

  it("sets the block: the turn stores two messages, the history says model, the log has before and after, the next prompt shows it", async () => {
    const id = await entity(4000);
    await engine.memory.set(id, 'city', 'Lisbon', 'local');
    const requests = await rememberTurn(id, [{ label: 'city', text: 'Porto' }]);
    expect(requests[0].body.tools.map((t: any) => t.function.name)).toEqual(['remember']);
    expect(requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call-1', content: expect.stringMatching(/^remembered: block "city" is set/) });
    // During the turn the prompt still shows memory as the turn began.
    expect(requests[1].body.messages[0].content).toBe('You are Ada.\n\nPinned memory:\ncity: Lisbon');
    expect((await engine.entities.messages(id, {}, 'local')).data.map((m) => m.content)).toEqual(['I moved to Porto, remember that', 'Noted.']);
    expect((await engine.entities.window(id, 'local')).blocks).toHaveLength(2);
    expect((await engine.memory.get(id, 'city', 'local')).text).toBe('Porto');
    expect((await engine.memory.history(id, 'local')).history.at(-1)).toMatchObject({ label: 'city', before: 'Lisbon', after: 'Porto', source: 'model' });
    const logs = await engine.logs.list({ pageSize: 5 });
    const record = await engine.logs.get(logs.data.find((l) => l.facade === 'recall')!.id);
    expect((record.request as { memory: unknown }).memory).toEqual([{ label: 'city', before: 'Lisbon', after: 'Porto' }]);
    const from = fake.requests.length;
    await collect(engine.entities.send(id, { content: 'where do I live?' }, 'local'));
    const next = chatPrompts(from)[0];
    expect(next[0].content).toBe('You are Ada.\n\nPinned memory:\ncity: Porto');
  });

  it('a call past the limits or with bad arguments is refused in its tool message and changes nothing', async () => {
    const id = await entity(4000);
    const requests = await rememberTurn(id, [{ label: 'big', text: 'word '.repeat(300) }, { label: 'no good', text: 'x' }, 'not json']);
    const tools = requests.at(-1)!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
    expect(tools[0]).toMatch(/^not remembered: pinned memory is full: block "big" would bring pinned memory to \d+ tokens; the limit is 200/);
    expect(tools[1]).toMatch(/^not remembered: invalid memory label "no good"/);
    expect(tools[2]).toMatch(/^not remembered: the arguments must be JSON/);
    expect((await engine.memory.list(id, 'local')).memory).toEqual([]);
    expect((await engine.memory.history(id, 'local')).history).toEqual([]);
  });

  it(`runs at most ${REMEMBER_CALLS_MAX} remember calls of a reply (as recall) and answers each of the rest "not run" (1,000 calls)`, async () => {
    const id = await entity(4000);
    const args = Array.from({ length: 1000 }, (_, i) => ({ label: `b${i % 3}`, text: `fact ${i}` }));
    const requests = await rememberTurn(id, args);
    const last = requests.at(-1)!.body.messages;
    const tools = last.filter((m: any) => m.role === 'tool');
    expect(tools).toHaveLength(1000);
    expect(tools.slice(0, REMEMBER_CALLS_MAX).every((m: any) => /^remembered: block "b\d" is set/.test(m.content))).toBe(true);
    for (const m of tools.slice(REMEMBER_CALLS_MAX)) expect(m.content).toBe(`not run: remember takes at most ${REMEMBER_CALLS_MAX} calls a round, and this reply made 1000`);
    // The calls not run are repeated without their arguments.
    const calls = last.find((m: any) => m.role === 'assistant' && m.tool_calls).tool_calls;
    expect(calls.slice(REMEMBER_CALLS_MAX).every((c: any) => c.function.arguments === '{}')).toBe(true);
    expect((await engine.memory.history(id, 'local')).history).toHaveLength(REMEMBER_CALLS_MAX);
    expect((await engine.memory.list(id, 'local')).memory.map((b) => [b.label, b.text])).toEqual([['b0', 'fact 6'], ['b1', 'fact 7'], ['b2', 'fact 5']]);
  });

  it('without --memory-tool the model is offered no tool; a failed turn leaves the memory as it was', async () => {
    const id = await entity(4000);
    const from = fake.requests.length;
    await collect(engine.entities.send(id, { content: 'hello' }, 'local'));
    expect(fake.requests.slice(from).every((r) => r.body.tools === undefined)).toBe(true);
    fake.script({ toolCalls: [{ id: 'c1', name: 'remember', arguments: '{"label":"city","text":"Porto"}' }] }, { status: 500, body: '{"error":"boom"}' });
    await expect(collect(engine.entities.send(id, { content: 'remember Porto', memoryTool: true }, 'local'))).rejects.toBeTruthy();
    expect((await engine.memory.list(id, 'local')).memory).toEqual([]);
    expect((await engine.entities.messages(id, {}, 'local')).data).toHaveLength(2);
  });
});

describe('pinned memory in the fit', () => {
  it("counts against the model's context like the instructions: a model that refuses any prompt over its context never refuses one", async () => {
    const small = makeEngine(dir, {
      route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0, contextSize: 1000, maxTokens: 100 }),
    });
    // The model counts a token per 6 characters: fewer than the engine's estimate, so only a prompt the fit let through too long is refused.
    fake.limit = { nCtx: 1000, count: (t) => Math.ceil(t.length / 6), perMessage: 3 };
    try {
      const e = await small.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
      const bare = (await small.entities.window(e.id, 'local')).model_limit_tokens!;
      await small.memory.set(e.id, 'notes', 'remember this always '.repeat(130), 'local');
      // What the model's context leaves the window shrinks by the memory's share, as the turn's fit does.
      const memoryTokens = (await small.memory.list(e.id, 'local')).tokens;
      expect((await small.entities.window(e.id, 'local')).model_limit_tokens).toBeLessThanOrEqual(bare - memoryTokens);
      const from = fake.prompts.length;
      for (let i = 0; i < 40; i++) await collect(small.entities.send(e.id, { content: `${FILLER[i % FILLER.length]} and more about it, day ${i}` }, 'local'));
      const prompts = fake.prompts.slice(from);
      expect(prompts.filter((p) => p.refused)).toEqual([]);
      expect((await small.entities.window(e.id, 'local')).blocks[0].kind).toBe('summary');
    } finally {
      fake.limit = undefined;
      await small.close();
    }
  });
});
