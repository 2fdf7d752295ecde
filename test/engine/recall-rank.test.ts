import { describe, expect, it } from 'vitest';
import { rankMatches, termWeight } from '../../src/engine/entities/recall-rank.js';
import { byPriority } from '../../src/engine/entities/retrieve.js';

const m = (seq: number, tokens = 20) => ({ seq, tokens });

describe('recall ranking', () => {
  it("weighs a term by how many of this entity's messages it matches", () => {
    expect(termWeight(2, { messages: 1000, meanTokens: 20 })).toBeGreaterThan(termWeight(200, { messages: 1000, meanTokens: 20 }));
    // The same two matches weigh less in a smaller transcript: the statistics are the entity's.
    expect(termWeight(2, { messages: 10, meanTokens: 20 })).toBeLessThan(termWeight(2, { messages: 1000, meanTokens: 20 }));
  });

  it('ranks the message that shares the rarer term first, and one sharing more terms above one sharing fewer', () => {
    const stats = { messages: 100, meanTokens: 20 };
    const ranked = rankMatches([[m(5), m(9)], [m(9), m(30), m(31), m(32), m(33), m(34), m(35), m(36)], [m(40)]], stats);
    expect(ranked[0]!.seq).toBe(9);
    expect(ranked.map((r) => r.seq).indexOf(40)).toBeLessThan(ranked.map((r) => r.seq).indexOf(30));
  });

  it('leaves out a term the store found too common (null), and never makes a hit of a term on over half the messages alone', () => {
    const stats = { messages: 10, meanTokens: 20 };
    expect(rankMatches([null, [m(1)]], stats).map((r) => r.seq)).toEqual([1]);
    expect(rankMatches([null], stats)).toEqual([]);
    // A name on 6 of 10 messages adds weight to message 2, which another term matched, but finds nothing alone.
    const name = [m(2), m(4), m(6), m(8), m(10), m(9)];
    const ranked = rankMatches([name, [m(2), m(3)]], stats);
    expect(ranked.map((r) => r.seq)).toEqual([2, 3]);
  });

  it('a shorter message ranks above a longer one for the same term; newer first among equals', () => {
    expect(rankMatches([[m(3, 100), m(4, 5)]], { messages: 50, meanTokens: 20 }).map((r) => r.seq)).toEqual([4, 3]);
    expect(rankMatches([[m(3), m(4)]], { messages: 50, meanTokens: 20 }).map((r) => r.seq)).toEqual([4, 3]);
  });

  it("takes a hit, the message after it, the one before, then two out, a strong hit's close context before a weak hit", () => {
    expect(byPriority([{ seq: 10, score: 1 }])).toEqual([10, 11, 9, 12, 8]);
    // The weak hit (a fifth of the best) comes after the strong one's runs; a seq is taken once.
    expect(byPriority([{ seq: 10, score: 5 }, { seq: 30, score: 1 }, { seq: 12, score: 0.9 }])).toEqual([10, 11, 9, 12, 8, 30, 31, 29, 13, 32, 14, 28]);
  });
});
