import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import { CancelledError, ContextOverflowError, ProviderError } from '../../src/core/errors.js';
import { TokenGate } from '../../src/engine/generation/shared-gate.js';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import { SHARED_REPLY_CAP } from '../../src/engine/generation/calibration.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, HALF_CHAR_TOKENS, echoLastUser, ownPromptTokens, startFakeOpenAI, isSummaryRequest } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-fit-');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const TOPICS = ['the harbour', 'a red kite', 'the old mill', 'winter bread', 'a lost key', 'the night train', 'rain on tin roofs'];
/** Messages of varied length, 60-260 characters: a conversation, not a fixed string. */
function message(i: number): string {
  const base = `Turn ${i}: tell me more about ${TOPICS[i % TOPICS.length]}, and remember what I said before. `;
  return (base + 'Details matter to me. '.repeat(i % 5) + (i % 3 === 0 ? 'Also, what happened next?' : '')).trim();
}

const done = (events: TurnEvent[]) => events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;
const route = (f: FakeOpenAI, extra: Record<string, unknown> = {}) => () => ({ provider: 'openai', baseUrl: f.url, model: 'fit-model', maxRetries: 0, ...extra });

describe('a turn always fits the model behind its route', () => {
  it('runs 25 turns with the default budget against a 600-token model with no configuration, and keeps what it learned', async () => {
    fake.limit = { nCtx: 600, ...HALF_CHAR_TOKENS };
    fake.prompts = [];
    const db = `${dir}/learn.db`;
    const engine = openEngineSync({ db, route: route(fake) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a patient storyteller.' }, 'local');
    expect(e.window.budget_tokens).toBe(32_000);
    const perTurn: Array<FakeOpenAI['prompts']> = [];
    let rotations = 0;
    for (let i = 0; i < 25; i++) {
      const seen = fake.prompts.length;
      const events = await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
      rotations += events.filter((x) => x.type === 'rotation').length;
      expect(done(events).completion.choices[0].message.content).toBe(`reply: ${message(i)}`);
      perTurn.push(fake.prompts.slice(seen));
    }
    // Probes ask, at a rotation, whether the context has grown; a turn's own prompts fit.
    const refused = perTurn.flat().filter((p) => p.refused && !p.probe).length;
    expect(refused).toBeGreaterThanOrEqual(1); // it had to learn: nothing told it the context
    expect(refused).toBeLessThanOrEqual(3);
    expect(perTurn.slice(-10).flat().every((p) => !p.refused || p.probe)).toBe(true);
    expect(perTurn.flat().every((p) => !p.probe || p.refused)).toBe(true);
    expect(rotations).toBeGreaterThanOrEqual(2);
    const w = await engine.entities.window(e.id, 'local');
    expect(checkWindowInvariant(w.blocks.map((b) => ({ kind: b.kind, covers: b.covers })), 50)).toBeNull();
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(50);
    // The model's context, not the 32,000-token budget, is what the window rotates at: both reads say so.
    const limit = (await engine.entities.get(e.id, 'local')).window.model_limit_tokens!;
    expect(limit).toBeGreaterThan(w.tokens / 2);
    expect(limit).toBeLessThan(600);
    expect(w.model_limit_tokens).toBe(limit);
    engine.close();

    // A new engine on the same file (as a new process would) fits the first time.
    fake.prompts = [];
    const again = openEngineSync({ db, route: route(fake) });
    for (let i = 25; i < 30; i++) await collect(again.entities.send(e.id, { content: message(i) }, 'local'));
    expect(fake.prompts.length).toBeGreaterThanOrEqual(5);
    expect(fake.prompts.filter((p) => p.refused && !p.probe)).toEqual([]);
    again.close();
    fake.limit = undefined;
  });

  it('fits a configured context from the first turn, counting the reply room, and never sends more', async () => {
    fake.limit = { nCtx: 400, ...HALF_CHAR_TOKENS };
    fake.prompts = [];
    const engine = makeEngine(dir, { route: route(fake, { contextSize: 400, maxTokens: 60 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Be brief.' }, 'local');
    for (let i = 0; i < 12; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    expect(fake.prompts.filter((p) => p.refused)).toEqual([]);
    // A configured context is never probed; prompt and reply room together stay within it: a
    // reply's 60, a summary's own max_tokens.
    expect(fake.prompts.some((p) => p.probe)).toBe(false);
    for (const p of fake.prompts) expect(p.tokens + (p.maxTokens ?? 60)).toBeLessThanOrEqual(400);
    engine.close();
    fake.limit = undefined;
  });

  it('summarizes a span too large for one request in pieces, each within the context', async () => {
    // A model whose context is smaller than the window a 2,000-token budget had built. Its usage
    // reports calibrate the route meanwhile, so the pieces are sized right the first time.
    fake.limit = { nCtx: 100_000, ...HALF_CHAR_TOKENS };
    const engine = makeEngine(dir, { route: route(fake), windowBudget: 2_000 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    for (let i = 0; i < 12; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    const before = (await engine.entities.window(e.id, 'local')).tokens;
    expect(before).toBeGreaterThan(500);
    fake.limit = { nCtx: 300, ...HALF_CHAR_TOKENS };
    fake.prompts = [];
    const seen = fake.requests.length;
    // The route now says what the model holds (as after `mgpt models add ... --context 300`).
    const small = openEngineSync({ db: engine.store, route: route(fake, { contextSize: 300, maxTokens: 40 }) });
    const events = await collect(small.entities.send(e.id, { content: 'And now?' }, 'local'));
    expect(events.some((x) => x.type === 'rotation')).toBe(true);
    const summaries = fake.requests.slice(seen).filter((r) => isSummaryRequest(r.body));
    expect(summaries.length).toBeGreaterThan(1);
    // The first piece is the span's start as the conversation sent it (a prefix cache serves it),
    // asking for the entity's long-term memory; the rest go as a transcript.
    expect(summaries[0].body.messages.at(-1).content).toMatch(/long-term memory/);
    expect(summaries[0].body.messages[0].content).toBe(fake.requests[seen - 1].body.messages[0].content);
    // Each piece after the first folds in the summary so far.
    expect(summaries[1].body.messages[1].content).toMatch(/^Earlier summary: /);
    expect(fake.prompts.every((p) => !p.refused && p.tokens <= 300)).toBe(true);
    const w = await small.entities.window(e.id, 'local');
    expect(checkWindowInvariant(w.blocks.map((b) => ({ kind: b.kind, covers: b.covers })), 26)).toBeNull();
    engine.close();
    fake.limit = undefined;
  });

  it('refuses, with a hint and no trace, a message the model cannot hold at all', async () => {
    fake.limit = { nCtx: 200, ...HALF_CHAR_TOKENS };
    const engine = makeEngine(dir, { route: route(fake, { contextSize: 200, maxTokens: 20 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await collect(engine.entities.send(e.id, { content: 'hello there' }, 'local'));
    const calls = fake.requests.length;
    const err = await collect(engine.entities.send(e.id, { content: 'word '.repeat(400) }, 'local')).catch((x) => x);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/context \(200 tokens/);
    expect(err.hint).toMatch(/split the message/);
    expect(fake.requests.length).toBe(calls);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(2);
    engine.close();
    fake.limit = undefined;
  });

  it('learns from a refused rotation summary and plans the turn again', async () => {
    const engine = makeEngine(dir, { fake, windowBudget: 200 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    let turns = 0;
    while ((await engine.entities.window(e.id, 'local')).tokens < 150) {
      await collect(engine.entities.send(e.id, { content: message(turns++) }, 'local'));
    }
    const seen = fake.requests.length;
    const overflow = { status: 400, body: JSON.stringify({ error: { code: 400, type: 'exceed_context_size_error', message: 'too long', n_prompt_tokens: 900, n_ctx: 4096 } }) };
    fake.script(overflow);
    const events = await collect(engine.entities.send(e.id, { content: `${message(turns)} ${'Details matter to me. '.repeat(8)}` }, 'local'));
    expect(events.some((x) => x.type === 'rotation')).toBe(true);
    const sent = fake.requests.slice(seen).map((r) => (isSummaryRequest(r.body) ? 'summary' : 'reply'));
    expect(sent).toEqual(['summary', 'summary', 'reply']);
    const row = (await engine.store.calibration.get(`openai:${fake.url}#fake-model`))!;
    expect(row.contextTokens).toBe(4096);
    expect(row.factor).toBeGreaterThan(1);
    engine.close();
  });

  it('a refusal that persists after the retry fails the turn clearly and stores nothing', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const overflow = { status: 400, body: JSON.stringify({ error: { code: 400, type: 'exceed_context_size_error', message: 'too long', n_prompt_tokens: 900, n_ctx: 512 } }) };
    fake.script(overflow, overflow);
    const err = await collect(engine.entities.send(e.id, { content: 'hi' }, 'local')).catch((x) => x);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err.message).toMatch(/does not fit the model's context/);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(0);
    engine.close();
  });
});

describe('a context shared by parallel requests (llama-server without -np)', () => {
  const SHARED = 'Context size has been exceeded.';

  it('is learned when it runs out before the reply starts, and the turn is tried again with its reply bounded', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    for (let i = 0; i < 7; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    const seen = fake.requests.length;
    fake.script({ text: 'never seen', streamError: { afterChunks: 0, message: SHARED } });
    const events = await collect(engine.entities.send(e.id, { content: message(7) }, 'local'));
    expect(done(events).completion.choices[0].message.content).toBe(`reply: ${message(7)}`);
    const row = (await engine.store.calibration.get(`openai:${fake.url}#fake-model`))!;
    // The prompt fitted: the context is not taken smaller; what parallel replies fill is bounded.
    expect(row).toMatchObject({ contextSource: 'shared', contextTokens: null });
    const sent = fake.requests.slice(seen).map((r) => r.body);
    expect(sent).toHaveLength(2);
    expect(sent[0]).not.toHaveProperty('max_tokens');
    expect(sent[1].max_tokens).toBe(SHARED_REPLY_CAP);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(16);
    engine.close();
  });

  it('mid-reply, the reply goes on where it stopped: the prompt again, ending with the reply so far, whose echo is dropped', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    for (let i = 0; i < 6; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    const seen = fake.requests.length;
    fake.script({ text: ['one ', 'two ', 'three'], streamError: { afterChunks: 2, message: SHARED } }, { text: ['one t', 'wo three', ' four'] });
    const events = await collect(engine.entities.send(e.id, { content: message(6) }, 'local'));
    expect(events.filter((x) => x.type === 'delta').map((x: any) => x.text)).toEqual(['one ', 'two ', 'three', ' four']);
    expect(done(events).completion.choices[0].message.content).toBe('one two three four');
    const [first, again] = fake.requests.slice(seen).map((r) => r.body);
    expect(again.messages).toEqual([...first.messages, { role: 'assistant', content: 'one two ' }]);
    // The bound less what the reply already holds ('one two ': 3 tokens): the whole reply keeps to the bound.
    expect(again.max_tokens).toBe(SHARED_REPLY_CAP - 3);
    const page = await engine.entities.messages(e.id, { after: 12, limit: 5 }, 'local');
    expect(page.data.map((m) => m.content)).toEqual([message(6), 'one two three four']);
    engine.close();
  });

  it('mid-reply, a server that does not continue the reply fails the turn with a hint, stores nothing, and later turns bound their replies', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    for (let i = 0; i < 6; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    fake.script({ text: 'one two three four', streamError: { afterChunks: 2, message: SHARED } });
    const err = await collect(engine.entities.send(e.id, { content: message(6) }, 'local')).catch((x) => x);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toBe('the shared context ran out mid-reply, and the server did not continue the reply from where it stopped');
    expect(err.hint).toMatch(/-np N/);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(12);
    expect((await engine.store.calibration.get(`openai:${fake.url}#fake-model`))!.contextSource).toBe('shared');
    await collect(engine.entities.send(e.id, { content: message(7) }, 'local'));
    expect(fake.requests.at(-1)!.body.max_tokens).toBe(SHARED_REPLY_CAP);
    engine.close();
  });

  it('a context that stays full fails the turn after three more tries, saying so', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const full = { text: 'x', streamError: { afterChunks: 0, message: SHARED } };
    fake.script(full, full, full, full);
    const err = await collect(engine.entities.send(e.id, { content: 'hello' }, 'local')).catch((x) => x);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err.message).toMatch(/^the server's shared context ran out on every attempt/);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(0);
    engine.close();
  });
});

describe('requests on a shared context take turns', () => {
  const key = () => `openai:${fake.url}#fake-model`;

  it('while the size is unknown, one request at a time: a second turn is not sent until the first ends', async () => {
    const engine = makeEngine(dir, { fake });
    await engine.deps.calibration.learn(key(), new ContextOverflowError('ran out', { shared: true }), 100, 0);
    const replies = await twoTurnsWhileOneHolds(engine, async (sent) => {
      await waitFor(() => sent() >= 1);
      await new Promise((r) => setTimeout(r, 150));
      expect(sent()).toBe(1);
    });
    expect(replies).toEqual(['first reply', 'second reply']);
    engine.close();
  });

  it('a route that does not share its context sends both at once', async () => {
    const engine = makeEngine(dir, { fake });
    const replies = await twoTurnsWhileOneHolds(engine, (sent) => waitFor(() => sent() >= 2));
    expect(replies).toEqual(['first reply', 'second reply']);
    engine.close();
  });
});

/** Two turns on two entities while the first request's reply is held open; `whileHeld` looks at how many were sent. */
async function twoTurnsWhileOneHolds(engine: ReturnType<typeof makeEngine>, whileHeld: (sent: () => number) => Promise<void>): Promise<string[]> {
  const [a, b] = [await engine.entities.create({ model: 'mgpt-1-27b' }, 'local'), await engine.entities.create({ model: 'mgpt-1-27b' }, 'local')];
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  fake.script({ text: ['first ', 'reply'], holdAfterFirst: hold }, { text: 'second reply' });
  seen = fake.requests.length;
  const turns = [a, b].map((e, i) => collect(engine.entities.send(e.id, { content: `message ${i}` }, 'local')));
  try {
    await whileHeld(() => fake.requests.length - seen);
  } finally {
    release();
  }
  return (await Promise.all(turns)).map((t) => done(t).completion.choices[0].message.content as string).sort();
}

let seen = 0;

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('TokenGate', () => {
  it('lets requests that fit together run, queues the rest first come first served, and gives a cancelled wait back', async () => {
    const gate = new TokenGate(1000);
    const order: string[] = [];
    const a = await gate.acquire(600);
    const b = gate.acquire(600).then((n) => (order.push('b'), n));
    const ac = new AbortController();
    const c = gate.acquire(300, ac.signal).catch((err) => (order.push('c cancelled'), err));
    const d = gate.acquire(300).then((n) => (order.push('d'), n));
    await new Promise((r) => setTimeout(r, 10));
    // d would fit beside a, but b came first.
    expect(order).toEqual([]);
    ac.abort();
    expect(await c).toBeInstanceOf(CancelledError);
    gate.release(a);
    expect(await b).toBe(600);
    expect(await d).toBe(300);
    expect(order).toEqual(['c cancelled', 'b', 'd']);
    // Larger than the whole: it runs alone once the gate is empty.
    const big = gate.acquire(5000);
    gate.release(600);
    gate.release(300);
    expect(await big).toBe(1000);
  });
});

describe('what a route learned', () => {
  const key = () => `openai:${fake.url}#fake-model`;
  const named = (n: number) => new ContextOverflowError('too long', { contextTokens: n });

  it('a context the server names replaces what was learned, even upwards; a shared one is marked and bounds replies; a configured one wins', async () => {
    const engine = makeEngine(dir, { fake });
    const cal = engine.deps.calibration;
    await cal.learn(key(), named(1024), 2000, 0);
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: 1024, contextSource: 'server' });
    await cal.learn(key(), named(4096), 5000, 0);
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: 4096, contextSource: 'server' });
    await cal.learn(key(), new ContextOverflowError('ran out', { shared: true }), 1000, 0);
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: 4096, contextSource: 'shared' });
    await cal.learn(key(), named(2048), 5000, 0);
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: 2048, contextSource: 'shared' });
    const model = await engine.deps.chatModel('mgpt-1-27b');
    // Shared: never probed, and replies are bounded by the room kept for them.
    expect(await cal.fit(model, 0, 0)).toMatchObject({ contextTokens: 2048, retest: false, replyCap: 512 });
    const configured = openEngineSync({ db: engine.store, route: route(fake, { contextSize: 8192 }) });
    expect((await configured.deps.calibration.fit(await configured.deps.chatModel('mgpt-1-27b'), 0, 0)).contextTokens).toBe(8192);
    expect(await cal.reset(key())).toBe(1);
    expect(await engine.store.calibration.get(key())).toBeUndefined();
    engine.close();
  });
});

describe('route limits reach the provider', () => {
  it('sends max_tokens and temperature when the route sets them, and neither when it does not', async () => {
    const set = makeEngine(dir, { route: route(fake, { maxTokens: 77, temperature: 0.2 }) });
    const e = await set.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await collect(set.entities.send(e.id, { content: 'hi' }, 'local'));
    expect(fake.requests.at(-1)!.body).toMatchObject({ max_tokens: 77, temperature: 0.2 });
    set.close();
    const unset = makeEngine(dir, { route: route(fake) });
    const u = await unset.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await collect(unset.entities.send(u.id, { content: 'hi' }, 'local'));
    expect(fake.requests.at(-1)!.body).not.toHaveProperty('max_tokens');
    expect(fake.requests.at(-1)!.body).not.toHaveProperty('temperature');
    unset.close();
  });

  it('keeps finish_reason length for a reply cut at maxTokens, in the completion and its replay', async () => {
    fake.limit = { nCtx: 100_000, ...HALF_CHAR_TOKENS };
    const engine = makeEngine(dir, { route: route(fake, { maxTokens: 3 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const c = done(await collect(engine.entities.send(e.id, { content: 'one two three four five', idempotencyKey: 'k' }, 'local'))).completion;
    expect(c.choices[0].finish_reason).toBe('length');
    expect(c.choices[0].message.content).toBe('reply: one two');
    expect(c.usage.completion_tokens).toBe(3);
    const again = done(await collect(engine.entities.send(e.id, { content: 'one two three four five', idempotencyKey: 'k' }, 'local')));
    expect(again.replayed).toBe(true);
    expect(again.completion.choices[0].finish_reason).toBe('length');
    engine.close();
    fake.limit = undefined;
  });
});

describe('the fake model counts its own way', () => {
  it('counts about twice what o200k does for English', () => {
    const body = { messages: [{ role: 'user', content: 'x'.repeat(100) }] };
    expect(ownPromptTokens(HALF_CHAR_TOKENS, body)).toBe(55);
    expect(echoLastUser(body).text).toBe(`reply: ${'x'.repeat(100)}`);
  });
});

describe('asking whether a learned context changed (issue 37, item 14)', () => {
  async function talk(turns: number, db: string): Promise<{ probes: number; refusedTurns: number; engine: ReturnType<typeof openEngineSync>; id: string }> {
    const engine = openEngineSync({ db, route: route(fake) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a patient storyteller.' }, 'local');
    for (let i = 0; i < turns; i++) await collect(engine.entities.send(e.id, { content: message(i) }, 'local'));
    return { probes: fake.prompts.filter((p) => p.probe).length, refusedTurns: fake.prompts.filter((p) => p.refused && !p.probe).length, engine, id: e.id };
  }

  it('a server that does not report its context is probed once, then not again until a backoff that doubles has passed', async () => {
    fake.limit = { nCtx: 600, ...HALF_CHAR_TOKENS };
    fake.prompts = [];
    const { probes, engine } = await talk(60, `${dir}/probe-backoff.db`);
    engine.close();
    fake.limit = undefined;
    // Before: a probe at every rotation once the context was learned (the 600-token model rotates every few turns).
    expect(probes).toBe(1);
  });

  it("a server that reports its context (llama-server's /props) is never probed, and a changed report is used at the next rotation", async () => {
    fake.limit = { nCtx: 600, ...HALF_CHAR_TOKENS };
    fake.propsContext = 600;
    fake.prompts = [];
    const asked = fake.propsAsked;
    const { probes, engine, id } = await talk(40, `${dir}/probe-props.db`);
    expect(fake.propsAsked).toBeGreaterThan(asked);
    expect(probes).toBe(0);
    // The server restarted with a larger context: the next rotation reads it and the prompts grow past the old one.
    fake.limit = { nCtx: 1200, ...HALF_CHAR_TOKENS };
    fake.propsContext = 1200;
    fake.prompts = [];
    for (let i = 40; i < 60; i++) await collect(engine.entities.send(id, { content: message(i) }, 'local'));
    expect(fake.prompts.filter((p) => p.probe)).toEqual([]);
    expect(Math.max(...fake.prompts.map((p) => p.tokens))).toBeGreaterThan(600);
    engine.close();
    fake.limit = undefined;
    fake.propsContext = undefined;
  });
});
