/**
 * Entity window rotation planning (SPEC section 4), pure.
 *
 * The window is a list of blocks covering transcript seqs 1..N exactly once. When the new
 * message pushes it over budget, the oldest blocks are taken until removing them brings the
 * window to at most 60% of the budget; they are replaced by one summary block whose size is
 * capped so that the window (new message included) stays within budget.
 */

export const ROTATE_TARGET_RATIO = 0.6;
export const SUMMARY_MAX_RATIO = 0.25;

export interface PlannedBlock {
  tokens: number;
  coversFrom: number;
  coversTo: number;
}

export interface RotationPlan {
  /** How many of the oldest blocks the summary replaces (>= 1). */
  take: number;
  /** Seq range of the replaced span. */
  covers: [number, number];
  /** The summary may be at most this many tokens. */
  maxSummaryTokens: number;
  /** Tokens of the window without the span (new message included). */
  remainingTokens: number;
}

export function windowTokens(blocks: ReadonlyArray<{ tokens: number }>): number {
  let t = 0;
  for (const b of blocks) t += b.tokens;
  return t;
}

/** Plans the rotation needed before a new message of `newTokens` joins `blocks`; null when none is. */
export function planRotation(
  blocks: readonly PlannedBlock[],
  newTokens: number,
  budget: number,
): RotationPlan | null {
  let total = windowTokens(blocks) + newTokens;
  if (total <= budget || blocks.length === 0) return null;
  const target = Math.floor(budget * ROTATE_TARGET_RATIO);
  let take = 0;
  while (take < blocks.length && total > target) {
    total -= blocks[take].tokens;
    take++;
  }
  const maxSummaryTokens = Math.max(0, Math.min(Math.floor(budget * SUMMARY_MAX_RATIO), budget - total));
  return {
    take,
    covers: [blocks[0].coversFrom, blocks[take - 1].coversTo],
    maxSummaryTokens,
    remainingTokens: total,
  };
}

/** Checks the window invariant: blocks cover 1..n exactly once, in order, summaries before messages. */
export function checkWindowInvariant(
  blocks: ReadonlyArray<{ kind: 'summary' | 'message'; covers: readonly [number, number] | number[] }>,
  n: number,
): string | null {
  let next = 1;
  let seenMessage = false;
  for (const [i, b] of blocks.entries()) {
    if (b.covers[0] !== next) return `block ${i} starts at ${b.covers[0]}, expected ${next}`;
    if (b.covers[1] < b.covers[0]) return `block ${i} covers an empty range`;
    if (b.kind === 'message') {
      seenMessage = true;
      if (b.covers[0] !== b.covers[1]) return `message block ${i} covers more than one seq`;
    } else if (seenMessage) {
      return `summary block ${i} follows a message block`;
    }
    next = b.covers[1] + 1;
  }
  return next === n + 1 ? null : `blocks end at ${next - 1}, transcript has ${n}`;
}
