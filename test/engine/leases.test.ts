import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../src/core/errors.js';
import type { Clock } from '../../src/engine/deps.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const prompts = join(dir, 'prompts');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(prompts, { recursive: true });
  writeFileSync(join(prompts, 'narrator.md'), 'You narrate.\n');
});
afterAll(() => fake.close());

/** A clock the test moves: a lease can expire without any real time passing (no refresh fires). */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    iso: () => new Date(Date.now() + offset).toISOString(),
    advance: (ms) => {
      offset += ms;
    },
  };
}

/** A second engine on the same SQLite file: another process, as far as the database is concerned. */
function twin(e: Engine, opts: { clock?: Clock; leaseTtlMs?: number } = {}): Engine {
  return openEngineSync({
    db: sqliteOf(e).db.name,
    promptsDir: prompts,
    route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }),
    ...opts,
  });
}

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
};

describe('entity leases past their expiry', () => {
  it('a turn whose lease expired but was not taken still commits', async () => {
    const clock = movableClock();
    const engine = makeEngine(dir, { fake, clock, leaseTtlMs: 60_000 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const before = fake.requests.length;
    fake.script({ text: 'slow reply', delayMs: 300 });
    const turn = collect(engine.entities.send(e.id, { content: 'hello' }, 'local'));
    await until(() => fake.requests.length > before);
    clock.advance(120_000);
    const events = await turn;
    expect(events.at(-1)).toMatchObject({ type: 'done' });
    const log = await engine.entities.messages(e.id, { limit: 10 }, 'local');
    expect(log.data.map((m) => m.content)).toEqual(['hello', 'slow reply']);
    expect(sqliteOf(engine).db.prepare(`SELECT COUNT(*) AS n FROM turn_leases`).get()).toEqual({ n: 0 });
    engine.close();
  });

  it('a turn whose expired lease another writer took gets a ConflictError and stores nothing', async () => {
    const clock = movableClock();
    const engine = makeEngine(dir, { fake, clock, leaseTtlMs: 60_000 });
    const other = twin(engine, { clock, leaseTtlMs: 60_000 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const before = fake.requests.length;
    fake.script({ text: 'lost reply', delayMs: 400 });
    const turn = collect(engine.entities.send(e.id, { content: 'first' }, 'local')).catch((x) => x);
    await until(() => fake.requests.length > before);
    clock.advance(120_000);
    const taken = collect(other.entities.send(e.id, { content: 'second' }, 'local'));
    const err = await turn;
    expect(err).toBeInstanceOf(ConflictError);
    await taken;
    const log = await engine.entities.messages(e.id, { limit: 10 }, 'local');
    expect(log.data.map((m) => m.content)).toEqual(['second', 'reply: second']);
    other.close();
    engine.close();
  });
});

describe('an entity deleted mid-turn', () => {
  it.each([['while the reply streams (the lease is lost)', 300], ['before the commit (the lease row went with it)', 60_000]])(
    'ends the turn saying it was deleted, %s, and stores nothing',
    async (_, leaseTtlMs) => {
      const engine = makeEngine(dir, { fake, leaseTtlMs });
      const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
      let release!: () => void;
      const before = fake.requests.length;
      fake.script({ text: ['first ', 'second'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
      const turn = collect(engine.entities.send(e.id, { content: 'hello' }, 'local')).catch((x) => x);
      await until(() => fake.requests.length > before);
      await engine.entities.delete(e.id, 'local');
      // A short lease is refreshed (and found gone) while the reply is held; a long one only fails at the commit.
      await new Promise((r) => setTimeout(r, leaseTtlMs < 1000 ? 400 : 10));
      release();
      const err = await turn;
      expect(err).toBeInstanceOf(NotFoundError);
      expect(err.code).toBe('not_found');
      // Named as its user names it, the id beside for machine output.
      expect(err.message).toBe('entity ada was deleted while this turn ran; nothing was stored');
      expect(err.entityId).toBe(e.id);
      expect(sqliteOf(engine).db.prepare(`SELECT COUNT(*) AS n FROM messages WHERE entity_id = ?`).get(e.id)).toEqual({ n: 0 });
      engine.close();
    },
  );
});

describe('universe turns have one writer', () => {
  const ask = (e: Engine, universe: string, userInput: string) => e.respond({ model: 'game-1-lite-frozen', universe, userInput });

  it('parallel respond calls on one universe: one wins, the others get ConflictError, the conversation stays whole', async () => {
    const engine = makeEngine(dir, { fake, promptsDir: prompts });
    const { universe } = await engine.universes.create({ storedPrompt: 'narrator' });
    fake.script({ text: 'the winner', delayMs: 200 });
    const results = await Promise.allSettled([ask(engine, universe, 'a'), ask(engine, universe, 'b'), ask(engine, universe, 'c')]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(2);
    for (const err of lost) expect(err).toBeInstanceOf(ConflictError);
    const conv = (await engine.universes.doc(universe)).runtime.conversation;
    expect(conv).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'the winner' },
    ]);
    // The lease is gone with the turn: the next call goes through.
    await ask(engine, universe, 'd');
    expect((await engine.universes.doc(universe)).runtime.conversation).toHaveLength(4);
    engine.close();
  });

  it('two engines on one SQLite file: the second writer gets ConflictError while the first turn runs', async () => {
    const engine = makeEngine(dir, { fake, promptsDir: prompts });
    const other = twin(engine);
    const { universe } = await engine.universes.create({ storedPrompt: 'narrator' });
    const before = fake.requests.length;
    fake.script({ text: 'first answer', delayMs: 300 });
    const first = ask(engine, universe, 'one');
    await until(() => fake.requests.length > before);
    await expect(ask(other, universe, 'two')).rejects.toBeInstanceOf(ConflictError);
    await first;
    await ask(other, universe, 'three');
    expect((await engine.universes.doc(universe)).runtime.conversation.map((m) => m.content)).toEqual([
      'one', 'first answer', 'three', 'reply: three',
    ]);
    other.close();
    engine.close();
  });
});
