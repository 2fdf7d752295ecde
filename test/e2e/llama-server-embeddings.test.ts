import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors.js';
import type { ModelRoute } from '../../src/core/models.js';
import type { Engine } from '../../src/engine/engine.js';
import { NO_EVENTS } from '../../src/engine/events.js';
import { openEngine } from '../../src/engine/open-engine.js';
import { OpenAIEmbeddingModel } from '../../src/providers/openai/openai-embeddings.js';
import { cliEnv, mgptBinary } from '../helpers/cli.js';
import { collect } from '../helpers/engine.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { STORY_PROMPTS } from '../helpers/gguf.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Semantic recall's wire and storage against the real `llama-server --embeddings` and the tiny
 * story model: what the server sends is what the store keeps, on SQLite and PostgreSQL. The model
 * is far too small to rank meaning usefully; the fusion's ranking is tested with the fake's
 * deterministic vectors (test/engine/semantic-recall.test.ts).
 */
const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-embed-');
let embedding: LlamaServer;
let plain: LlamaServer;

beforeAll(async () => {
  if (!parts) return;
  embedding = await startLlamaServer(parts, ['-c', '2048', '--temp', '0', '-n', '12', '--embeddings', '--pooling', 'mean']);
  plain = await startLlamaServer(parts, ['-c', '2048', '--temp', '0', '-n', '12']);
}, 60_000);
afterAll(async () => {
  await embedding?.stop();
  await plain?.stop();
});

const cluster = parts ? await startPostgres('semantic recall on PostgreSQL against llama-server') : null;
afterAll(() => cluster?.stop());

const stores = [{ name: 'sqlite', db: () => `${dir}/embed.db` }, ...(cluster ? [{ name: 'postgres', db: () => cluster.url }] : [])];

/** The largest difference between two vectors' components. */
const apart = (a: Float32Array, b: Float32Array) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

/** The server's vectors for one text differ in their last digits with what it was batched with; another text's, by far more. */
function expectNear(a: Float32Array, b: Float32Array): void {
  expect(a.length).toBe(b.length);
  expect(apart(a, b)).toBeLessThan(2e-3);
}

function route(server: LlamaServer): ModelRoute {
  return { provider: 'openai', baseUrl: server.url, model: 'stories', maxRetries: 0, embeddings: { model: 'stories-embed' } };
}

describe.skipIf(!parts)('semantic recall against the real llama-server', () => {
  it('the wire: one vector per input, in order, of the model\'s width, the same text giving the same vector (to its last digits)', async () => {
    const model = new OpenAIEmbeddingModel({ baseUrl: embedding.url, model: 'stories-embed', maxRetries: 0 });
    const [a, b, again] = await model.embed([STORY_PROMPTS[0], STORY_PROMPTS[1], STORY_PROMPTS[0]]);
    expect(a).toBeInstanceOf(Float32Array);
    expect(a.length).toBeGreaterThan(8);
    expect(b.length).toBe(a.length);
    expectNear(again, a);
    expect(apart(a, b)).toBeGreaterThan(1e-2);
    // A server started without --embeddings refuses, as a ProviderError with its status.
    const none = new OpenAIEmbeddingModel({ baseUrl: plain.url, model: 'stories-embed', maxRetries: 0 });
    const refused = await none.embed(['hello']).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).upstreamStatus).toBeGreaterThanOrEqual(400);
  });

  describe.each(stores)('on $name', ({ db }) => {
    let engine: Engine;
    beforeAll(async () => {
      engine = await openEngine({ db: db(), route: () => route(embedding) });
    });
    afterAll(() => engine?.close());

    it('stores each turn\'s messages with the vectors the server gives for them, and a recall ranks with them', async () => {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
      for (const content of STORY_PROMPTS.slice(0, 3)) await collect(engine.entities.send(e.id, { content }, 'local'));
      await engine.deps.semantic.drain();
      const messages = (await engine.entities.messages(e.id, { after: 0 }, 'local')).data;
      const stored = await engine.store.vectors.vectors(e.id, 'stories-embed', undefined);
      expect(stored.map((v) => v.seq)).toEqual(messages.map((m) => m.seq));
      const direct = await new OpenAIEmbeddingModel({ baseUrl: embedding.url, model: 'stories-embed' }).embed(messages.map((m) => m.content || ' '));
      // Each seq holds its own message's vector: near it, and further from every other message's.
      stored.forEach((v, i) => {
        expectNear(v.vector, direct[i]);
        direct.forEach((d, j) => j !== i && expect(apart(v.vector, d)).toBeGreaterThan(apart(v.vector, direct[i])));
      });
      // The fused ranking still finds what the words find.
      const found = await engine.entities.recall(e.id, { q: 'Lily park' }, 'local');
      expect(found.messages.map((m) => m.seq)).toContain(1);
    });
  });

  it('a one-shot mgpt send (the real binary) stores its messages\' vectors before it exits, with MGPT_PROVIDER_EMBEDDINGS', async () => {
    const env = cliEnv(`${dir}/cli`, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: embedding.url, MGPT_PROVIDER_EMBEDDINGS: 'stories-embed' });
    expect((await mgptBinary(['entities', 'create', '--name', 'lily'], env)).code).toBe(0);
    const sent = await mgptBinary(['send', 'lily', STORY_PROMPTS[0]], env);
    // (The server's -n 12 cuts the reply, which send warns about; nothing about embeddings.)
    expect([sent.code, sent.stderr]).toEqual([0, expect.not.stringMatching(/embed/i)]);
    const store = SqliteStore.open(env.MGPT_DB);
    try {
      const id = (store.db.prepare(`SELECT id FROM entities WHERE name = 'lily'`).get() as { id: string }).id;
      expect((await store.vectors.vectors(id, 'stories-embed', undefined)).map((v) => v.seq)).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('a route whose server has no embeddings answers every turn as before, counts the failures and stores no vector', async () => {
    const counted = { stored: 0, failed: 0 };
    const events = { ...NO_EVENTS, embeddings: (o: 'stored' | 'failed', n: number) => void (counted[o] += n) };
    const engine = await openEngine({ db: `${dir}/none.db`, route: () => route(plain), events });
    try {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
      for (const content of STORY_PROMPTS.slice(0, 3)) await collect(engine.entities.send(e.id, { content }, 'local'));
      await engine.deps.semantic.drain();
      expect((await engine.entities.messages(e.id, { after: 0 }, 'local')).data).toHaveLength(6);
      expect(counted).toMatchObject({ stored: 0 });
      expect(counted.failed).toBeGreaterThanOrEqual(6);
      expect(await engine.store.vectors.vectors(e.id, 'stories-embed', undefined)).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
