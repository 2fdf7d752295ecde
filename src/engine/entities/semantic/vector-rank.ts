import type { MessageVector } from '../../../store/types.js';
import type { RankedSeq } from '../recall-rank.js';

/** Cosine similarity; 0 when either vector is all zeros. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** The vector scaled to length 1 (a zero vector as it is). */
export function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  if (!n) return v;
  const k = 1 / Math.sqrt(n);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * k;
  return out;
}

/** The dot product: the cosine of two unit vectors. Four sums at once: a recall runs it for every message. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length - (a.length % 4);
  for (let i = 0; i < n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (let i = n; i < a.length; i++) s0 += a[i] * b[i];
  return s0 + s1 + s2 + s3;
}

/**
 * The messages whose vectors stand out as nearest the question's, most similar first (newest first
 * among equals), at most `limit`, by brute force: an entity's transcript is bounded by its cap.
 * Every message has some similarity, and what counts as near differs from one model to the next,
 * so a message is a hit only when its similarity is more than a standard deviation above the
 * mean of the entity's: without that, every turn would recall its `limit` nearest, related or not.
 * The vectors are of unit length (vector-cache.ts holds them so), so a cosine is a dot product; a
 * vector of another length (a model that changed its output under the same name) is never compared.
 */
export function rankByVector(query: Float32Array, vectors: readonly MessageVector[], limit: number, beforeSeq?: number): RankedSeq[] {
  const q = unit(query);
  const scored: RankedSeq[] = [];
  for (const v of vectors) {
    if (v.vector.length !== q.length || (beforeSeq !== undefined && v.seq >= beforeSeq)) continue;
    scored.push({ seq: v.seq, score: dot(q, v.vector) });
  }
  const cut = standOut(scored.map((s) => s.score));
  return scored
    .filter((s) => s.score > cut)
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, limit);
}

/** The mean of the scores plus their standard deviation. */
function standOut(scores: readonly number[]): number {
  if (!scores.length) return Infinity;
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const variance = scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length;
  return mean + Math.sqrt(variance);
}

/** Reciprocal rank fusion's constant: a rank's weight is 1/(K + rank), so the first few of each list count about alike. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion of rankings (each most relevant first): a message's score is the sum of
 * 1/(RRF_K + its rank) over the rankings it is in, so one found by both the words and the meaning
 * comes first, and either alone still counts. Scores, not ranks, are what a ranking's scale would
 * break: BM25 and cosine are never compared.
 */
export function fuseRankings(rankings: ReadonlyArray<readonly RankedSeq[]>): RankedSeq[] {
  const scores = new Map<number, number>();
  for (const ranking of rankings) ranking.forEach((h, i) => scores.set(h.seq, (scores.get(h.seq) ?? 0) + 1 / (RRF_K + i + 1)));
  return [...scores.entries()].map(([seq, score]) => ({ seq, score })).sort((a, b) => b.score - a.score || b.seq - a.seq);
}
