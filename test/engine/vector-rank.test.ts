import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { checkEmbeddingRoute } from '../../src/engine/entities/semantic/embedding-route.js';
import { RRF_K, cosine, fuseRankings, rankByVector, unit } from '../../src/engine/entities/semantic/vector-rank.js';

const v = (...xs: number[]) => Float32Array.from(xs);
/** As the cache holds them: of unit length. */
const u = (...xs: number[]) => unit(v(...xs));

describe('the meaning ranking', () => {
  it('cosine: 1 for the same direction, 0 across, -1 opposite, 0 for a zero vector; unit keeps the direction at length 1', () => {
    expect([...unit(v(3, 4))]).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect([...unit(v(0, 0))]).toEqual([0, 0]);
    expect(cosine(v(1, 2), v(2, 4))).toBeCloseTo(1);
    expect(cosine(v(1, 0), v(0, 3))).toBe(0);
    expect(cosine(v(1, 1), v(-1, -1))).toBeCloseTo(-1);
    expect(cosine(v(0, 0), v(1, 1))).toBe(0);
  });

  it('keeps only the messages that stand out (a deviation above the mean), nearest first, at most the limit; another length is never compared', () => {
    const vectors = [
      { seq: 1, vector: u(1, 0, 0) },
      { seq: 2, vector: u(0.9, 0.1, 0) },
      { seq: 3, vector: u(0, 1, 0) },
      { seq: 4, vector: u(0, 0, 1) },
      { seq: 5, vector: u(0, 1, 1) },
      { seq: 6, vector: u(0, 0.1, 1) },
      { seq: 7, vector: u(1, 0) },
    ];
    expect(rankByVector(v(3, 0, 0), vectors, 5).map((h) => h.seq)).toEqual([1, 2]);
    expect(rankByVector(v(1, 0, 0), vectors, 5)[0].score).toBeCloseTo(1);
    expect(rankByVector(v(1, 0, 0), vectors, 1).map((h) => h.seq)).toEqual([1]);
    // Only messages before the window are ranked, and stand out among those: before seq 7 the two
    // near ones still do; before seq 3 they are all there is, and neither stands out of the other.
    expect(rankByVector(v(1, 0, 0), vectors, 5, 7).map((h) => h.seq)).toEqual([1, 2]);
    expect(rankByVector(v(1, 0, 0), vectors, 5, 3).map((h) => h.seq)).toEqual([]);
    expect(rankByVector(v(0, 0, 1), vectors, 5, 4).map((h) => h.seq)).toEqual([]);
    expect(rankByVector(v(0, 0, 1), vectors, 5).map((h) => h.seq)).toEqual([4, 6]);
    // All alike: nothing stands out, nothing is a hit.
    expect(rankByVector(v(1, 0, 0), [{ seq: 1, vector: u(0, 1, 0) }, { seq: 2, vector: u(0, 1, 0) }], 5)).toEqual([]);
    expect(rankByVector(v(1, 0, 0), [], 5)).toEqual([]);
  });

  it('reciprocal rank fusion: found by both first, either alone after, by rank and not by score', () => {
    const words = [{ seq: 10, score: 40 }, { seq: 20, score: 3 }];
    const meaning = [{ seq: 30, score: 0.9 }, { seq: 20, score: 0.8 }];
    const fused = fuseRankings([words, meaning]);
    expect(fused.map((h) => h.seq)).toEqual([20, 30, 10]);
    expect(fused[0].score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 2));
    // Equal scores: the newer message first.
    expect(fuseRankings([[{ seq: 1, score: 1 }], [{ seq: 2, score: 1 }]]).map((h) => h.seq)).toEqual([2, 1]);
    expect(fuseRankings([words, []])).toEqual([{ seq: 10, score: 1 / (RRF_K + 1) }, { seq: 20, score: 1 / (RRF_K + 2) }]);
  });
});

describe('a route\'s embeddings setting', () => {
  it('is fine when absent, or well formed for its provider', () => {
    expect(() => checkEmbeddingRoute('m', { provider: 'echo' })).not.toThrow();
    expect(() => checkEmbeddingRoute('m', { provider: 'openai', baseUrl: 'http://x/v1', embeddings: { model: 'nomic-embed-text', dimensions: 64 } })).not.toThrow();
    expect(() => checkEmbeddingRoute('m', { provider: 'openai', embeddings: { model: 'e', baseUrl: 'http://x/v1' } })).not.toThrow();
    expect(() => checkEmbeddingRoute('m', { provider: 'llama', gguf: '/m.gguf', embeddings: {} })).not.toThrow();
  });

  it('is refused with what to set when it cannot work', () => {
    const refused: Array<[Parameters<typeof checkEmbeddingRoute>[1], RegExp]> = [
      [{ provider: 'openai', embeddings: { model: 'e' } }, /need a server/],
      [{ provider: 'openai', baseUrl: 'http://x/v1', embeddings: { model: 'e', dimensions: 0 } }, /dimensions must be a positive integer/],
      [{ provider: 'llama', embeddings: {} }, /need a GGUF file/],
      [{ provider: 'echo', embeddings: {} }, /not offered by the echo provider/],
    ];
    for (const [route, message] of refused) {
      expect(() => checkEmbeddingRoute('mgpt-1-27b', route)).toThrow(ConfigError);
      expect(() => checkEmbeddingRoute('mgpt-1-27b', route)).toThrow(message);
    }
  });
});
