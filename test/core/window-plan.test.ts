import { describe, expect, it } from 'vitest';
import { checkWindowInvariant, planRotation } from '../../src/core/window-plan.js';

const blocks = (...tokens: number[]) => tokens.map((t, i) => ({ tokens: t, coversFrom: i + 1, coversTo: i + 1 }));

describe('planRotation', () => {
  it('does nothing while the window with the new message fits the budget', () => {
    expect(planRotation(blocks(30, 30), 40, 100)).toBeNull();
  });

  it('takes the oldest blocks until the rest is at most 60% of the budget', () => {
    const plan = planRotation(blocks(30, 30, 30), 20, 100)!;
    // 110 -> drop 30 -> 80 -> drop 30 -> 50 <= 60
    expect(plan.take).toBe(2);
    expect(plan.covers).toEqual([1, 2]);
    expect(plan.remainingTokens).toBe(50);
    expect(plan.maxSummaryTokens).toBe(25);
  });

  it('caps the summary so the window stays within budget when the new message is huge', () => {
    const plan = planRotation(blocks(10, 10), 95, 100)!;
    expect(plan.take).toBe(2);
    expect(plan.maxSummaryTokens).toBe(5);
  });

  it('rotates for the model limit when the budget is far larger, counting each block with its framing', () => {
    // 3 blocks + the new one: 30*3 + 20 = 110 tokens, + 4 framing each = 126 > cap 120.
    const plan = planRotation(blocks(30, 30, 30), 20, 32_000, { cap: 120, perBlock: 4 })!;
    // Fold until cost <= 72: 126 -> 92 -> 58.
    expect(plan.take).toBe(2);
    expect(plan.remainingTokens).toBe(50);
    // min(0.25 * 120, 120 - 58 - 4) = 30
    expect(plan.maxSummaryTokens).toBe(30);
    expect(planRotation(blocks(30, 30, 30), 20, 32_000, { cap: 126, perBlock: 4 })).toBeNull();
  });

  it('leaves the summary room for its own framing when the new message nearly fills the model', () => {
    const plan = planRotation(blocks(10, 10), 100, 32_000, { cap: 110, perBlock: 4 })!;
    expect(plan.take).toBe(2);
    // The new message alone costs 104; the summary may take what is left after its own framing.
    expect(plan.maxSummaryTokens).toBe(2);
  });

  it('spans a leading summary block so summaries are recursive', () => {
    const b = [{ tokens: 20, coversFrom: 1, coversTo: 10 }, { tokens: 50, coversFrom: 11, coversTo: 11 }];
    expect(planRotation(b, 40, 100)!.covers).toEqual([1, 11]);
  });
});

describe('checkWindowInvariant', () => {
  it('accepts contiguous coverage and rejects gaps, overlaps and misplaced summaries', () => {
    const ok = [
      { kind: 'summary' as const, covers: [1, 4] },
      { kind: 'message' as const, covers: [5, 5] },
    ];
    expect(checkWindowInvariant(ok, 5)).toBeNull();
    expect(checkWindowInvariant(ok, 6)).toMatch(/transcript has 6/);
    expect(checkWindowInvariant([{ kind: 'message', covers: [2, 2] }], 2)).toMatch(/starts at 2/);
    expect(checkWindowInvariant([{ kind: 'message', covers: [1, 1] }, { kind: 'summary', covers: [2, 3] }], 3)).toMatch(/follows/);
  });
});
