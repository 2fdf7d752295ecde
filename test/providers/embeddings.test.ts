import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors.js';
import { createEmbeddingModel } from '../../src/providers/registry.js';
import { vectorsOf } from '../../src/providers/openai/openai-embeddings.js';
import { STORY_PROMPTS, testGguf } from '../helpers/gguf.js';

const gguf = testGguf();

describe('an /embeddings answer', () => {
  it('gives the vectors in the inputs\' order by their index, as float32s', () => {
    const text = JSON.stringify({ data: [{ index: 1, embedding: [0.5, 1] }, { index: 0, embedding: [0.1, -2] }] });
    expect(vectorsOf(text, 2).map((v) => [...v])).toEqual([[Math.fround(0.1), -2], [0.5, 1]]);
  });

  it('refuses an answer without one finite vector per input, all one length', () => {
    for (const body of [
      'not json',
      JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }] }),
      JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }, { index: 1, embedding: [1] }] }),
      JSON.stringify({ data: [{ index: 0, embedding: [1, 'x'] }, { index: 1, embedding: [1, 2] }] }),
      JSON.stringify({ data: [{ index: 0, embedding: [] }, { index: 1, embedding: [] }] }),
      JSON.stringify({ error: 'no' }),
    ]) {
      expect(() => vectorsOf(body, 2)).toThrow(ProviderError);
    }
  });
});

describe('the embedding model a route names', () => {
  it('none for a route without embeddings, or one whose provider has none', async () => {
    expect(await createEmbeddingModel({ provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', model: 'm' })).toBeUndefined();
    expect(await createEmbeddingModel({ provider: 'echo', embeddings: { model: 'm' } })).toBeUndefined();
  });

  it('openai: named by its model and the length asked for, on its own server or the route\'s', async () => {
    const m = await createEmbeddingModel({ provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', model: 'chat', embeddings: { model: 'nomic-embed-text' } });
    expect(m?.name).toBe('nomic-embed-text');
    const shortened = await createEmbeddingModel({ provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', embeddings: { model: 'text-embedding-3-small', dimensions: 256 } });
    expect(shortened?.name).toBe('text-embedding-3-small@256');
  });
});

describe.skipIf(!gguf)('llama: a local GGUF through node-llama-cpp', () => {
  it('embeds each text into one vector of the model\'s width, the same text alike, a text past its context cut to it', async () => {
    const m = (await createEmbeddingModel({ provider: 'llama', gguf: gguf!, threads: 1, embeddings: {} }))!;
    expect(m.name).toBe('gguf:stories260K.gguf');
    const long = STORY_PROMPTS.join(' ').repeat(30);
    const [a, b, again, cut] = await m.embed([STORY_PROMPTS[0], STORY_PROMPTS[1], STORY_PROMPTS[0], long]);
    expect(a.length).toBeGreaterThan(8);
    for (const v of [b, again, cut]) expect(v.length).toBe(a.length);
    expect([...again]).toEqual([...a]);
    expect([...b]).not.toEqual([...a]);
    expect(cut.every((x) => Number.isFinite(x))).toBe(true);
  });
});
