import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ContextOverflowError } from '../../src/core/errors.js';
import { parseValue } from '../../src/config/schema.js';
import type { Engine } from '../../src/engine/engine.js';
import { collect, done, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-share-');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.propsContext = undefined;
  fake.propsSlots = undefined;
});

const key = () => `openai:${fake.url}#fake-model`;
const route = (extra: Record<string, unknown> = {}) => () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0, ...extra });
/** What a server that ran out of the context its parallel requests share says. */
const ranOut = () => new ContextOverflowError('Context size has been exceeded.', { shared: true });

async function fitOf(engine: Engine) {
  return engine.deps.calibration.fit(await engine.deps.chatModel('mgpt-1-27b'), 0, 0);
}

describe("a shared context's turns are planned for a slot's share of it", () => {
  it("takes the slots and the context from the server's /props once the route is seen shared, asks once per process, and keeps the context", async () => {
    fake.propsContext = 2048;
    fake.propsSlots = 4;
    const engine = makeEngine(dir, { fake });
    // Not shared: the whole context, and the server is not asked about slots.
    await engine.deps.calibration.learn(key(), new ContextOverflowError('too long', { contextTokens: 2048 }), 3000, 0);
    const asked = fake.propsAsked;
    expect(await fitOf(engine)).toMatchObject({ contextTokens: 2048, reserveTokens: 512 });
    expect(fake.propsAsked).toBe(asked);
    await engine.deps.calibration.learn(key(), ranOut(), 500, 0);
    const fits = await Promise.all(Array.from({ length: 5 }, () => fitOf(engine)));
    for (const fit of fits) {
      // 2,048 / 4 = 512: 128 kept for the reply (and asked as its bound), the window within 512 x 0.95 - 128.
      expect(fit).toMatchObject({ contextTokens: 512, reserveTokens: 128, replyCap: 128, share: { contextTokens: 2048, slots: 4 }, retest: false });
      expect(fit.limit!.cap).toBe(Math.floor(512 * 0.95) - 128 - 3);
    }
    expect(await fitOf(engine)).toEqual(fits[0]);
    expect(fake.propsAsked).toBe(asked + 1);
    engine.close();
  });

  it('a shared route whose size was never named learns it from /props, so its requests no longer run one at a time', async () => {
    fake.propsContext = 4096;
    fake.propsSlots = 2;
    const engine = makeEngine(dir, { fake });
    await engine.deps.calibration.learn(key(), ranOut(), 500, 0);
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: null, contextSource: 'shared' });
    expect(await fitOf(engine)).toMatchObject({ contextTokens: 2048, share: { contextTokens: 4096, slots: 2 } });
    expect(await engine.store.calibration.get(key())).toMatchObject({ contextTokens: 4096, contextSource: 'shared' });
    expect(await engine.deps.calibration.sharedContext(await engine.deps.chatModel('mgpt-1-27b'))).toEqual({ contextTokens: 4096, factor: 1 });
    engine.close();
  });

  it('configured slots and context need no server, and gate the route from its first request; a server that does not say keeps the whole context', async () => {
    const configured = makeEngine(dir, { route: route({ contextSize: 2048, sharedSlots: 4 }) });
    const asked = fake.propsAsked;
    expect(await fitOf(configured)).toMatchObject({ contextTokens: 512, share: { contextTokens: 2048, slots: 4 }, replyCap: 128 });
    expect(fake.propsAsked).toBe(asked);
    const model = await configured.deps.chatModel('mgpt-1-27b');
    expect(configured.deps.calibration.knownUnshared(model)).toBe(false);
    expect(await configured.deps.calibration.sharedContext(model)).toEqual({ contextTokens: 2048, factor: 1 });
    configured.close();
    // Learned shared, but the server has no /props: the whole context, as before (nothing to cut it by).
    const unsaid = makeEngine(dir, { fake });
    await unsaid.deps.calibration.learn(key(), new ContextOverflowError('too long', { contextTokens: 2048 }), 3000, 0);
    await unsaid.deps.calibration.learn(key(), ranOut(), 500, 0);
    const fit = await fitOf(unsaid);
    expect(fit).toMatchObject({ contextTokens: 2048, replyCap: 512 });
    expect(fit.share).toBeUndefined();
    unsaid.close();
  });

  it('sharedSlots 1 plans every turn for the whole context the server reports shared', async () => {
    fake.propsContext = 2048;
    fake.propsSlots = 4;
    const engine = makeEngine(dir, { route: route({ sharedSlots: 1 }) });
    await engine.deps.calibration.learn(key(), ranOut(), 500, 0);
    const fit = await fitOf(engine);
    expect(fit).toMatchObject({ contextTokens: 2048, reserveTokens: 512, replyCap: 512 });
    expect(fit.share).toBeUndefined();
    engine.close();
  });

  it("an entity's window limit is the same while other requests hold the shared context", async () => {
    fake.propsContext = 2048;
    fake.propsSlots = 4;
    const engine = makeEngine(dir, { fake });
    await engine.deps.calibration.learn(key(), ranOut(), 500, 0);
    const [a, b] = [await engine.entities.create({ model: 'mgpt-1-27b' }, 'local'), await engine.entities.create({ model: 'mgpt-1-27b' }, 'local')];
    await collect(engine.entities.send(a.id, { content: 'first words' }, 'local'));
    const quiet = await fitOf(engine);
    const limit = (await engine.entities.get(a.id, 'local')).window.model_limit_tokens;
    // Planned for the share (the model's count of a prompt is a little above the estimate: the factor).
    expect(quiet.limit!.cap).toBeLessThanOrEqual(Math.floor(512 * 0.95) - 128 - 3);
    expect(limit).toBeLessThanOrEqual(quiet.limit!.cap);
    let release!: () => void;
    fake.script({ text: ['held ', 'reply'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
    const seen = fake.requests.length;
    const held = collect(engine.entities.send(b.id, { content: 'a long story, please' }, 'local'));
    while (fake.requests.length === seen) await new Promise((r) => setTimeout(r, 5));
    expect(await fitOf(engine)).toEqual(quiet);
    expect((await engine.entities.get(a.id, 'local')).window.model_limit_tokens).toBe(limit);
    // Beside the held request there is room: this turn runs now.
    const events = await collect(engine.entities.send(a.id, { content: 'more words' }, 'local'));
    expect(done(events).completion.choices[0].message.content).toBe('reply: more words');
    release();
    await held;
    engine.close();
  });
});

describe('a reply cut when the route first runs out of its shared context', () => {
  const SHARED = 'Context size has been exceeded.';

  it('already as long as a turn on a share may reply, ends there (finish_reason length): nothing more is asked of the server', async () => {
    fake.propsContext = 2048;
    fake.propsSlots = 4;
    const engine = makeEngine(dir, { fake });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const long = 'The little dog ran to the park and found a ball. '.repeat(20);
    const seen = fake.requests.length;
    fake.script({ text: [long, 'never sent'], streamError: { afterChunks: 1, message: SHARED } });
    const events = await collect(engine.entities.send(e.id, { content: 'Tell me a story.' }, 'local'));
    expect(events.filter((x) => x.type === 'delta').map((x: any) => x.text)).toEqual([long]);
    const choice = done(events).completion.choices[0];
    expect([choice.message.content, choice.finish_reason]).toEqual([long, 'length']);
    expect(fake.requests.length - seen).toBe(1);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(2);
    expect(await fitOf(engine)).toMatchObject({ contextTokens: 512, replyCap: 128 });
    engine.close();
  });
});

describe('a message larger than its share', () => {
  it('is refused saying it is the share that binds, with the setting that gives turns more of the context; nothing is sent or stored', async () => {
    const engine = makeEngine(dir, { route: route({ contextSize: 256, sharedSlots: 4 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const seen = fake.requests.length;
    const err = await collect(engine.entities.send(e.id, { content: 'Tell me a story about a harbour. '.repeat(8) }, 'local')).catch((x) => x);
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect(err.message).toMatch(/message is about \d+ tokens, but a turn's share of the model's shared context \(64 of 256 tokens, cut for 4 slots; 16 kept for the reply\) leaves room for about \d+ after the instructions$/);
    expect(err.hint).toBe('split the message into smaller ones, or plan turns for more of the shared context: mgpt config set models.mgpt-1-27b.sharedSlots 2');
    expect(fake.requests.length).toBe(seen);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(0);
    engine.close();
  });
});

describe('sharedSlots is checked', () => {
  it('by the config, and by the engine for a file edited by hand: the turn is refused and nothing is stored', async () => {
    expect(parseValue('models.mgpt-1-27b.sharedSlots', '4')).toEqual({ value: 4 });
    for (const bad of ['0', '2.5', 'four', '-1', '5000']) {
      expect(parseValue('models.mgpt-1-27b.sharedSlots', bad)).toEqual({ error: expect.stringMatching(/^models\.mgpt-1-27b\.sharedSlots must be a whole number of slots from 1 to 1024/) });
    }
    const engine = makeEngine(dir, { route: route({ sharedSlots: 0 }) });
    const err = await engine.deps.chatModel('mgpt-1-27b').catch((x) => x);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('model mgpt-1-27b: sharedSlots must be a whole number of slots from 1 to 1024, got 0');
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const seen = fake.requests.length;
    await expect(collect(engine.entities.send(e.id, { content: 'hello' }, 'local'))).rejects.toBeInstanceOf(ConfigError);
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(0);
    expect(fake.requests.length).toBe(seen);
    engine.close();
  });
});
