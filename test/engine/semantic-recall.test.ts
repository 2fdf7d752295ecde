import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { ModelRoute } from '../../src/core/models.js';
import type { Engine } from '../../src/engine/engine.js';
import { NO_EVENTS } from '../../src/engine/events.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, done, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Semantic recall through the fake provider's deterministic embeddings: each dimension is a topic,
 * and a text's vector counts the words it has of each, so "feline" and "kitten" are near while no
 * word of one is a form of the other. The wire and the stores are tested against the real
 * llama-server (test/e2e/llama-server-embeddings.test.ts), whose tiny model ranks nothing usefully.
 */
const TOPICS = [
  ['kitten', 'feline', 'cat', 'pet', 'adopted', 'pumpkin'],
  ['weather', 'grey', 'rain'],
  ['trains', 'timetables'],
  ['walk', 'river'],
  ['coffee', 'afternoon'],
  ['garden', 'work'],
  ['day'],
];
function topicVector(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return [...TOPICS.map((t) => words.filter((w) => t.includes(w)).length), 0.1];
}

const FACT = 'My kitten answers to Pumpkin.';
const QUESTION = 'What is the name of the feline I adopted?';
const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.embed = topicVector;
});
afterAll(() => fake.close());

function route(embeddings?: ModelRoute['embeddings']): ModelRoute {
  return { provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0, ...(embeddings && { embeddings }) };
}

/** An auto-recall entity whose fact has left its window behind filler turns. */
async function chatted(engine: Engine, turns = 30, folded = true): Promise<string> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
  await engine.entities.update(e.id, { budget_tokens: 300 }, 'local');
  await collect(engine.entities.send(e.id, { content: FACT }, 'local'));
  for (let i = 0; i < turns; i++) await collect(engine.entities.send(e.id, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
  const window = await engine.entities.window(e.id, 'local');
  if (folded) expect(window.blocks.find((b) => b.kind === 'message')!.covers[0]).toBeGreaterThan(2);
  return e.id;
}

function lastChatPrompt(): string {
  const chat = fake.requests.filter((r) => r.path.endsWith('/chat/completions') && !JSON.stringify(r.body.messages).includes('long-term memory'));
  return chat.at(-1)!.body.messages.at(-1).content;
}

const embeddingRequests = () => fake.requests.filter((r) => r.path.endsWith('/embeddings'));

describe('semantic recall', () => {
  it('finds a fact that shares no word with the question when the route has embeddings, where the words alone find nothing', async () => {
    const engine = makeEngine(dir, { route: () => route({ model: 'fake-embed' }) });
    const words = makeEngine(dir, { route: () => route() });
    try {
      const id = await chatted(engine);
      await engine.deps.semantic.drain();
      const found = await engine.entities.recall(id, { q: QUESTION }, 'local');
      expect(found.messages.map((m) => m.seq).slice(0, 2)).toEqual([1, 2]);
      expect(found.text).toMatch(/^#1 user \(\d{4}-\d\d-\d\d \d\d:\d\d\): My kitten answers to Pumpkin\.$/m);
      // The same transcript without embeddings: no word of the question is in the fact.
      const plain = await chatted(words);
      expect((await words.entities.recall(plain, { q: QUESTION }, 'local')).messages).toEqual([]);
      // An auto-recall turn embeds its question for the ranking, before its reply.
      await collect(engine.entities.send(id, { content: QUESTION }, 'local'));
      const asked = embeddingRequests().findIndex((r) => r.body.input.includes(QUESTION) && r.body.model === 'fake-embed');
      const answered = fake.requests.findIndex((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body.messages.at(-1)).includes(QUESTION));
      expect(asked).toBeGreaterThanOrEqual(0);
      expect(fake.requests.indexOf(embeddingRequests()[asked])).toBeLessThan(answered);
    } finally {
      await engine.close();
      await words.close();
    }
  });

  it('a route without embeddings sends no embeddings request, stores no vector, and sends what recall off would', async () => {
    const engine = makeEngine(dir, { route: () => route() });
    try {
      const before = embeddingRequests().length;
      const id = await chatted(engine);
      await collect(engine.entities.send(id, { content: QUESTION }, 'local'));
      const withRecall = lastChatPrompt();
      await engine.deps.semantic.drain();
      expect(embeddingRequests()).toHaveLength(before);
      expect(await engine.store.vectors.vectors(id, 'fake-embed', undefined)).toEqual([]);
      expect(withRecall).toBe(QUESTION);
    } finally {
      await engine.close();
    }
  });

  it('embeds every message after its turn commits, in the background, and a model change embeds them again', async () => {
    const db = join(dir, 'change.db');
    const first = openEngineSync({ db, route: () => route({ model: 'fake-embed' }) });
    const id = await chatted(first, 6, false);
    await first.close();
    const firstPass = embeddingRequests().find((r) => r.body.input.some((t: string) => t.startsWith('reply: ')))!;
    // The messages of a turn are embedded only after the provider answered it.
    const chatIndex = fake.requests.findIndex((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes(FACT));
    expect(fake.requests.indexOf(firstPass)).toBeGreaterThan(chatIndex);
    const second = openEngineSync({ db, route: () => route({ model: 'fake-embed-2', dimensions: 8 }) });
    try {
      const messages = (await second.entities.messages(id, { after: 0, limit: 100 }, 'local')).data;
      expect((await second.store.vectors.vectors(id, 'fake-embed', undefined)).map((v) => v.seq)).toEqual(messages.map((m) => m.seq));
      const stored = await second.store.vectors.vectors(id, 'fake-embed', undefined);
      expect([...stored[0].vector]).toEqual(topicVector(FACT).map((x) => Math.fround(x)));
      // A recall with the new model re-embeds what the old one embedded; the old vectors are replaced, not kept.
      await collect(second.entities.send(id, { content: QUESTION }, 'local'));
      await second.deps.semantic.drain();
      expect(embeddingRequests().at(-1)!.body).toMatchObject({ model: 'fake-embed-2', dimensions: 8 });
      expect((await second.store.vectors.vectors(id, 'fake-embed-2@8', undefined)).length).toBe(messages.length + 2);
      expect(await second.store.vectors.vectors(id, 'fake-embed', undefined)).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('a turn never waits for its messages\' embedding: the reply is out while the embeddings request is still unanswered', async () => {
    const engine = makeEngine(dir, { route: () => route({ model: 'fake-embed' }) });
    let release = () => {};
    fake.embedHold = new Promise((r) => (release = r));
    try {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
      const before = embeddingRequests().length;
      const turn = await collect(engine.entities.send(e.id, { content: FACT }, 'local'));
      expect(done(turn).completion.choices[0].message.content).toBe(`reply: ${FACT}`);
      // The pass asks once the reply is out, and is held; nothing is stored yet.
      for (let i = 0; i < 500 && embeddingRequests().length === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(embeddingRequests().length).toBe(before + 1);
      expect(await engine.store.vectors.vectors(e.id, 'fake-embed', undefined)).toEqual([]);
      release();
      await engine.deps.semantic.drain();
      expect((await engine.store.vectors.vectors(e.id, 'fake-embed', undefined)).map((v) => v.seq)).toEqual([1, 2]);
    } finally {
      release();
      fake.embedHold = undefined;
      await engine.close();
    }
  });

  it('a provider that fails to embed never fails a turn: recall ranks by words, and the failures are counted', async () => {
    const counted = { stored: 0, failed: 0 };
    const events = { ...NO_EVENTS, embeddings: (o: 'stored' | 'failed', n: number) => void (counted[o] += n) };
    const engine = makeEngine(dir, { route: () => route({ model: 'fake-embed' }), events });
    const ok = fake.embed;
    fake.embed = () => {
      throw new Error('embedding model crashed');
    };
    try {
      const id = await chatted(engine, 20);
      const turn = await collect(engine.entities.send(id, { content: 'Tell me about my kitten Pumpkin please' }, 'local'));
      expect(done(turn).completion.choices[0].message.content).toBe('reply: Tell me about my kitten Pumpkin please');
      // The words find it (kitten), as without embeddings.
      expect((await engine.entities.recall(id, { q: 'Tell me about my kitten Pumpkin please' }, 'local')).messages.map((m) => m.seq)).toContain(1);
      await engine.deps.semantic.drain();
      expect(counted.failed).toBeGreaterThan(0);
      expect(counted.stored).toBe(0);
      expect(await engine.store.vectors.vectors(id, 'fake-embed', undefined)).toEqual([]);
    } finally {
      fake.embed = ok;
      await engine.close();
    }
  });

  it('refuses an embeddings setting its provider cannot use, on the turn, before anything is stored', async () => {
    const cases: Array<[ModelRoute, RegExp]> = [
      [{ provider: 'echo', embeddings: { model: 'nomic-embed-text' } }, /embeddings are not offered by the echo provider/],
      [route({ baseUrl: fake.url }), /embeddings need the embedding model/],
      [route({ model: 'x', gguf: '/tmp/e.gguf' }), /gguf is for llama routes/],
      [{ provider: 'llama', gguf: '/tmp/m.gguf', embeddings: { model: 'x' } }, /a llama route embeds with a GGUF file/],
      [route({ model: '../../v1/keys' }), /embeddings model may hold only/],
    ];
    for (const [r, message] of cases) {
      const engine = makeEngine(dir, { route: () => r });
      try {
        const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
        await expect(collect(engine.entities.send(e.id, { content: 'hello' }, 'local'))).rejects.toMatchObject({ code: 'config', message: expect.stringMatching(message) });
        expect((await engine.entities.messages(e.id, { after: 0 }, 'local')).data).toEqual([]);
      } finally {
        await engine.close();
      }
    }
  });
});
