import { describe, expect, it } from 'vitest';
import { checkWindowInvariant, planRotation } from '../../src/core/window-plan.js';

const blocks = (...tokens: number[]) => tokens.map((t, i) => ({ tokens: t, coversFrom: i + 1, coversTo: i + 1 }));

describe('planRotation', () => {
  it('does nothing while the window with the new message fits the budget', () => {
    expect(planRotation(blocks(30, 30), 40, 100)).toBeNull();
  });

  it('folds the oldest blocks until the whole window, summary room included, is at most the target', () => {
    // Defaults: target 25%, summary 10%, so the kept blocks and the new message get 25 - 10 = 15.
    const plan = planRotation(blocks(10, 30, 30, 30, 5), 10, 100)!;
    // 115 -> 105 -> 75 -> 45 -> 15 <= 15
    expect(plan.take).toBe(4);
    expect(plan.covers).toEqual([1, 4]);
    expect(plan.remainingTokens).toBe(15);
    expect(plan.maxSummaryTokens).toBe(10);
    // So the whole window after the rotation is at most a quarter of the budget.
    expect(plan.remainingTokens + plan.maxSummaryTokens).toBeLessThanOrEqual(25);
  });

  it('takes its target and summary share from the settings', () => {
    const plan = planRotation(blocks(30, 30, 30), 20, 100, undefined, undefined, { target: 0.6, summary: 0.1 })!;
    // 110 -> 80 -> 50 <= 60 - 10
    expect(plan.take).toBe(2);
    expect(plan.remainingTokens).toBe(50);
    expect(plan.maxSummaryTokens).toBe(10);
  });

  it('never folds a summary block alone: a summary request carries something new', () => {
    const b = [
      { tokens: 80, coversFrom: 1, coversTo: 10, kind: 'summary' as const },
      { tokens: 10, coversFrom: 11, coversTo: 11, kind: 'message' as const },
    ];
    // Folding the summary alone would be enough (105 -> 25 <= 50 - 15), but it takes the message with it.
    const plan = planRotation(b, 15, 100, undefined, undefined, { target: 0.5, summary: 0.15 })!;
    expect(plan.take).toBe(2);
    expect(plan.covers).toEqual([1, 11]);
  });

  it('caps the summary so the window stays within budget when the new message is huge', () => {
    const plan = planRotation(blocks(10, 10), 95, 100)!;
    expect(plan.take).toBe(2);
    expect(plan.maxSummaryTokens).toBe(5);
  });

  it('rotates for the model limit when the budget is far larger, counting each block with its framing', () => {
    // 3 blocks + the new one: 30*3 + 20 = 110 tokens, + 4 framing each = 126 > cap 120.
    const plan = planRotation(blocks(30, 30, 30), 20, 32_000, { cap: 120, perBlock: 4 })!;
    // Fold until cost <= 30 - 12 - 4 = 14: 126 -> 92 -> 58 -> 24, and then there is nothing more to fold.
    expect(plan.take).toBe(3);
    expect(plan.remainingTokens).toBe(20);
    // min(0.1 * 120, 120 - 24 - 4) = 12
    expect(plan.maxSummaryTokens).toBe(12);
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
