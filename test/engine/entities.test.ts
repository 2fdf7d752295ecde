import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import { BadRequestError, ConflictError, isBusy, NotFoundError, PaymentRequiredError } from '../../src/core/errors.js';
import { DEFAULT_LEASE_TTL_MS, type Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { snapshot } from '../helpers/snapshot.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const send = (engine: Engine, id: string, content: string, key?: string) =>
  collect(engine.entities.send(id, { content, idempotencyKey: key }, 'local'));
const doneOf = (events: TurnEvent[]) => events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;

describe('entity create, list, get', () => {
  const engine = makeEngine(dir);

  it('creates with the seed shape and validates model, name and instructions', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada', instructions: 'Be brief.' }, 'local');
    expect(e).toMatchObject({
      object: 'entity',
      entity_id: e.id,
      name: 'ada',
      instructions: 'Be brief.',
      model: 'mgpt-1-27b',
      state: 'none',
      read_only: false,
      transcript: { messages: 0, tokens: 0, cap_tokens: 1_000_000 },
      window: { budget_tokens: 32_000, tokens: 0, blocks: 0 },
    });
    expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await expect(engine.entities.create({ model: 'gpt-4o' }, 'local')).rejects.toThrow(BadRequestError);
    await expect(engine.entities.create({} as any, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/model is required/) });
    await expect(engine.entities.create({ model: 'mgpt-1-27b', name: 'x'.repeat(201) }, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/201 characters/) });
    await expect(engine.entities.create({ model: 'mgpt-1-27b', name: 'x'.repeat(200) }, 'local')).resolves.toBeTruthy();
    await expect(engine.entities.create({ model: 'mgpt-1-27b', instructions: 42 as any }, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/instructions must be a string/) });
  });

  it('lists most recently active first, without window counts, at most 200', async () => {
    const e2 = makeEngine(dir);
    const a = await e2.entities.create({ model: 'mgpt-1-27b', name: 'a' }, 'local');
    await new Promise((r) => setTimeout(r, 5));
    const b = await e2.entities.create({ model: 'mgpt-1-27b', name: 'b' }, 'local');
    await new Promise((r) => setTimeout(r, 5));
    expect((await e2.entities.list('local')).data.map((e) => e.name)).toEqual(['b', 'a']);
    await send(e2, a.id, 'wake up');
    const list = await e2.entities.list('local');
    expect(list.object).toBe('list');
    expect(list.data.map((e) => e.id)).toEqual([a.id, b.id]);
    expect(list.data[0].window).toEqual({ budget_tokens: 32_000 });
    expect((await e2.entities.get(a.id, 'local')).window).toEqual({ budget_tokens: 32_000, tokens: expect.any(Number), blocks: 2 });
    for (let i = 0; i < 205; i++) await e2.entities.create({ model: 'mgpt-1-27b', name: `n${i}` }, 'local');
    expect((await e2.entities.list('local')).data).toHaveLength(200);
    e2.close();
  });

  it('answers 404 for unknown ids and for another account', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await expect(() => engine.entities.get('nope', 'local')).rejects.toThrow(NotFoundError);
    await engine.accounts.create('other');
    const other = await engine.accounts.find('other');
    await expect(() => engine.entities.get(e.id, other.id)).rejects.toThrow(NotFoundError);
    await expect(collect(engine.entities.send(e.id, { content: 'x' }, other.id))).rejects.toThrow(NotFoundError);
  });
});

describe('send', () => {
  it('sends instructions first, then the window blocks in order, and stores both messages', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are Ada.' }, 'local');
    fake.script({ text: 'Hi Bob.', usage: { prompt_tokens: 30, completion_tokens: 3 } });
    const first = await send(engine, e.id, 'I am Bob.');
    expect(first.map((ev) => ev.type)).toEqual(['start', 'delta', 'delta', 'done']);
    fake.script({ text: 'Yes, Bob.' });
    const second = doneOf(await send(engine, e.id, 'Remember me?'));
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: 'I am Bob.' },
      { role: 'assistant', content: 'Hi Bob.' },
      { role: 'user', content: 'Remember me?' },
    ]);
    const firstDone = doneOf(first).completion;
    expect(firstDone).toMatchObject({
      object: 'chat.completion',
      model: 'mgpt-1-27b',
      entity_id: e.id,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi Bob.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 },
    });
    expect(firstDone.id).toMatch(/^chatcmpl-/);
    expect(second.completion.id).not.toBe(firstDone.id);
    const history = await engine.entities.messages(e.id, {}, 'local');
    expect(history.data.map((m) => [m.seq, m.role, m.content])).toEqual([
      [1, 'user', 'I am Bob.'],
      [2, 'assistant', 'Hi Bob.'],
      [3, 'user', 'Remember me?'],
      [4, 'assistant', 'Yes, Bob.'],
    ]);
    const w = await engine.entities.window(e.id, 'local');
    expect(w.blocks.map((b) => [b.kind, b.role, b.covers])).toEqual([
      ['message', 'user', [1, 1]],
      ['message', 'assistant', [2, 2]],
      ['message', 'user', [3, 3]],
      ['message', 'assistant', [4, 4]],
    ]);
    expect(w.tokens).toBe(w.blocks.reduce((t, b) => t + b.tokens, 0));
    engine.close();
  });

  it('rejects missing, empty or non-string content and bad keys, changing nothing', async () => {
    const engine = makeEngine(dir);
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    expect(() => engine.entities.send(e.id, {} as any, 'local')).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/content is required/) }));
    expect(() => engine.entities.send(e.id, { content: '  ' }, 'local')).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/empty/) }));
    expect(() => engine.entities.send(e.id, { content: 5 as any }, 'local')).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/must be a string/) }));
    expect(() => engine.entities.send(e.id, { content: 'x', idempotencyKey: 'k'.repeat(201) }, 'local')).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/201 characters/) }));
    expect(() => engine.entities.send(e.id, { content: 'x', idempotencyKey: '' }, 'local')).toThrow(BadRequestError);
    await expect(send(engine, e.id, 'x', 'k'.repeat(200))).resolves.toBeTruthy();
    engine.close();
  });

  it('refuses a message larger than the window budget with 400 and stores nothing', async () => {
    const engine = makeEngine(dir, { windowBudget: 50 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const before = snapshot(sqliteOf(engine).db.name, e.id);
    await expect(send(engine, e.id, 'word '.repeat(80))).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/larger than the window budget of 50/) });
    expect(snapshot(sqliteOf(engine).db.name, e.id)).toEqual(before);
    engine.close();
  });

  it('becomes read-only at the transcript cap and answers 409', async () => {
    const engine = makeEngine(dir, { transcriptCap: 30 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await send(engine, e.id, 'one two three four five six seven eight');
    expect((await engine.entities.get(e.id, 'local')).read_only).toBe(false);
    await send(engine, e.id, 'nine ten eleven twelve thirteen fourteen fifteen');
    const got = await engine.entities.get(e.id, 'local');
    expect(got.transcript.tokens).toBeGreaterThanOrEqual(30);
    expect(got.read_only).toBe(true);
    const err = await send(engine, e.id, 'more').catch((x) => x);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.code).toBe('read_only'); // a 409 that stays: batch and retries do not wait for it
    expect(isBusy(err)).toBe(false);
    engine.close();
  });

  it('answers 409 to a second message while a turn is running', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    fake.script({ text: 'slow reply here', chunkDelayMs: 100 });
    const first = send(engine, e.id, 'first');
    await new Promise((r) => setTimeout(r, 60));
    await expect(send(engine, e.id, 'second')).rejects.toMatchObject({ code: 'busy' });
    await first;
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(2);
    expect(DEFAULT_LEASE_TTL_MS).toBeLessThanOrEqual(30_000);
    engine.close();
  });
});

describe('idempotency', () => {
  it('replays a completed key with the same ids and content, appending nothing, streamed or buffered', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    fake.script({ text: 'The answer is 42.' });
    const first = await send(engine, e.id, 'question', 'key-1');
    const calls = fake.requests.length;
    const again = await send(engine, e.id, 'question', 'key-1');
    expect(fake.requests.length).toBe(calls);
    expect(doneOf(again).completion).toEqual(doneOf(first).completion);
    expect(doneOf(again).replayed).toBe(true);
    expect(again.filter((x) => x.type === 'delta').map((x: any) => x.text).join('')).toBe('The answer is 42.');
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(2);
    const err = await send(engine, e.id, 'another question', 'key-1').catch((x) => x);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/different content/) });
    engine.close();
  });

  it('answers 409 while the same key is in flight, then replays it', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    fake.script({ text: 'take your time', chunkDelayMs: 100 });
    const running = send(engine, e.id, 'q', 'key-2');
    await new Promise((r) => setTimeout(r, 60));
    await expect(send(engine, e.id, 'q', 'key-2')).rejects.toMatchObject({ code: 'busy' });
    await expect(send(engine, e.id, 'other', 'key-2')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/different content/) });
    const done = doneOf(await running);
    expect(doneOf(await send(engine, e.id, 'q', 'key-2')).completion.id).toBe(done.completion.id);
    engine.close();
  });

  it('keeps keys per entity', async () => {
    const engine = makeEngine(dir);
    const a = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const b = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await send(engine, a.id, 'same', 'k');
    await send(engine, b.id, 'different', 'k');
    expect((await engine.entities.get(b.id, 'local')).transcript.messages).toBe(2);
    engine.close();
  });
});

describe('billing', () => {
  it('is unmetered until a balance is set; then bills message and reply, and answers 402 when short', async () => {
    const engine = makeEngine(dir, { prices: { 'mgpt-1-27b': { input: 1_000_000, output: 1_000_000 } } });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await send(engine, e.id, 'free while unmetered');
    await engine.accounts.topup('local', 10);
    await send(engine, e.id, 'hello'); // 1 token in + 1 out at $1/token
    const acct = await engine.accounts.find('local');
    expect(acct.balanceUsd).toBe(8);
    const ledger = await engine.store.accounts.ledger('local');
    expect(ledger.at(-1)).toMatchObject({ entityId: e.id, inputTokens: 1, outputTokens: 1, costUsd: 2 });
    const err = await send(engine, e.id, 'one two three four five six seven eight nine ten').catch((x) => x);
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect(err.details).toEqual({ balanceUsd: 8, billedUsd: 10, missingUsd: 2 });
    await engine.accounts.topup('local', 2);
    await expect(send(engine, e.id, 'one two three four five six seven eight nine ten')).resolves.toBeTruthy();
    // The reply's cost is known only after it: 10 in + 10 out took the balance below zero.
    expect((await engine.accounts.find('local')).balanceUsd).toBe(-10);
    const err0 = await send(engine, e.id, 'hi').catch((x) => x);
    expect(err0.details).toEqual({ balanceUsd: -10, billedUsd: 1, missingUsd: 11 });
    await engine.accounts.topup('local', 10);
    const errZero = await send(engine, e.id, 'hi').catch((x) => x);
    expect(errZero.details).toEqual({ balanceUsd: 0, billedUsd: 1, missingUsd: 1 });
    engine.close();
  });

  it('does not bill the window, history or rotation summaries', async () => {
    const engine = makeEngine(dir, { windowBudget: 40, prices: { 'mgpt-1-27b': { input: 1_000_000, output: 1_000_000 } } });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'long standing instructions here' }, 'local');
    await engine.accounts.topup('local', 1000);
    let expected = 1000;
    for (let i = 0; i < 12; i++) {
      const events = await send(engine, e.id, `message number ${i} with a few words`);
      const m = (await engine.entities.messages(e.id, { after: (await engine.entities.get(e.id, 'local')).transcript.messages - 2 }, 'local')).data;
      expected -= m[0].tokens + m[1].tokens;
      expect((await engine.accounts.find('local')).balanceUsd).toBe(expected);
      if (i === 11) expect((await engine.entities.window(e.id, 'local')).blocks[0].kind).toBe('summary');
      expect(events.length).toBeGreaterThan(0);
    }
    engine.close();
  });
});

describe('delete', () => {
  it('answers the seed shape, removes every row and leaves no bytes in the file', async () => {
    const engine = makeEngine(dir);
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'secretive' }, 'local');
    const marker = 'ZEBRA-PINEAPPLE-7781';
    for (let i = 0; i < 20; i++) await send(engine, e.id, `${marker} message ${i} ${'padding '.repeat(50)}`);
    expect(await engine.entities.delete(e.id, 'local')).toEqual({ id: e.id, object: 'entity', deleted: true });
    await expect(() => engine.entities.get(e.id, 'local')).rejects.toThrow(NotFoundError);
    await expect(() => engine.entities.delete(e.id, 'local')).rejects.toThrow(NotFoundError);
    const s = snapshot(sqliteOf(engine).db.name, e.id);
    expect([s.entity, s.transcript.length, s.window.length]).toEqual([undefined, 0, 0]);
    const path = sqliteOf(engine).db.name;
    engine.close();
    expect(readFileSync(path).includes(marker)).toBe(false);
  });
});

describe('window cache', () => {
  it('never serves a stale window when another process writes the entity', async () => {
    const a = makeEngine(dir, { fake, windowBudget: 120 });
    // A second engine on the same file: another connection, its own cache, as another process has.
    const b = openEngineSync({
      db: sqliteOf(a).db.name,
      windowBudget: 120,
      route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'm', maxRetries: 0 }),
    });
    const e = await a.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
    for (let i = 0; i < 30; i++) {
      const engine = i % 3 === 0 ? b : a;
      await send(engine, e.id, `turn ${i} ${'filler words '.repeat(i % 4)}`);
      const w = await a.entities.window(e.id, 'local');
      const sent = fake.requests.at(-1)!.body.messages;
      expect(sent).toEqual(w.blocks.slice(0, -1).map((blk) => ({ role: blk.kind === 'summary' ? 'system' : blk.role, content: blk.content })));
    }
    expect(await a.entities.window(e.id, 'local')).toEqual(await b.entities.window(e.id, 'local'));
    a.close();
    b.close();
  });
});
