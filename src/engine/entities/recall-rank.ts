import type { TermMatch } from '../../store/types.js';

/**
 * How recall ranks an entity's messages: BM25 over the messages its question's terms matched, with
 * the entity's own statistics (how many of its messages each term matches, how long its messages
 * are), never the database's: another entity, or another account, using a word a thousand times
 * changes nothing here.
 */

/** What the entity holds where recall looks: its messages before the window, and their mean length. */
export interface EntityStats {
  messages: number;
  meanTokens: number;
}

/** A message recall ranked: its seq and score (higher is more relevant). */
export interface RankedSeq {
  seq: number;
  score: number;
}

const K1 = 1.2;
const B = 0.75;

/**
 * The share of the entity's messages past which a term alone never makes a message a hit: in a
 * chat between two people each one's name is on half of the messages. It still adds its weight to
 * a message that another term matched.
 */
const ALONE_SHARE = 0.5;

/** A term's weight in this entity: rarer is heavier (BM25's idf, never below zero). */
export function termWeight(matches: number, stats: EntityStats): number {
  const n = Math.max(stats.messages, matches);
  return Math.log(1 + (n - matches + 0.5) / (matches + 0.5));
}

/**
 * The matched messages, most relevant first (newest first among equals). `matches[i]` are term
 * i's; a term the store found too common in the entity to rank by (null) is left out.
 */
export function rankMatches(matches: ReadonlyArray<readonly TermMatch[] | null>, stats: EntityStats): RankedSeq[] {
  const scores = new Map<number, { score: number; telling: boolean }>();
  for (const found of matches) {
    if (!found?.length) continue;
    const weight = termWeight(found.length, stats);
    const telling = found.length <= stats.messages * ALONE_SHARE;
    for (const m of found) {
      const norm = 1 - B + (B * m.tokens) / Math.max(1, stats.meanTokens);
      const s = scores.get(m.seq) ?? { score: 0, telling: false };
      s.score += (weight * (K1 + 1)) / (1 + K1 * norm);
      s.telling ||= telling;
      scores.set(m.seq, s);
    }
  }
  return [...scores.entries()]
    .filter(([, s]) => s.telling && s.score > 0)
    .map(([seq, s]) => ({ seq, score: s.score }))
    .sort((a, b) => b.score - a.score || b.seq - a.seq);
}
