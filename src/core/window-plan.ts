/**
 * Entity window rotation planning (docs/design.md#the-window-and-rotation), pure.
 *
 * The window is a list of blocks covering transcript seqs 1..N exactly once. When the new
 * message pushes it over the budget or the model's limit, the oldest blocks are folded into one
 * summary so that the WHOLE window afterwards (summary, kept blocks and the new message) is at
 * most the target share of both: then the next rotation is many turns away. (Bounding only the
 * kept blocks, with the summary on top, left the window at about 85% after a rotation: against
 * a real model it rotated every 2.4 turns.)
 */

/** The share of the budget (and of the model's limit) the whole window is brought to by a rotation. */
export const DEFAULT_ROTATE_TARGET = 0.25;
/** The share of the budget (and of the model's limit) one summary may take. */
export const DEFAULT_SUMMARY_SHARE = 0.1;

export interface RotationShares {
  target: number;
  summary: number;
}

const DEFAULT_SHARES: RotationShares = { target: DEFAULT_ROTATE_TARGET, summary: DEFAULT_SUMMARY_SHARE };

export interface PlannedBlock {
  tokens: number;
  coversFrom: number;
  coversTo: number;
  /** A summary block alone is never folded again: a summary must carry something new. */
  kind?: 'summary' | 'message';
  /** A message block's role: a fold ends before a user message, so the live window starts with one. */
  role?: string;
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

/**
 * What the model behind the route can take, in estimated tokens: the window's blocks, each with
 * `perBlock` added for the chat template's framing of a message, may hold at most `cap`.
 */
export interface ModelLimit {
  cap: number;
  perBlock: number;
}

/** The window's size as the model limit counts it. */
export function modelCost(blocks: ReadonlyArray<{ tokens: number }>, perBlock: number): number {
  return windowTokens(blocks) + perBlock * blocks.length;
}

/**
 * Plans the rotation needed before a new message of `newTokens` joins `blocks`; null when none is.
 * It rotates when the window would pass the entity's budget or the model's limit, and then folds
 * the oldest blocks until the rest, with room for the summary, is at most `shares.target` of both.
 */
export function planRotation(
  blocks: readonly PlannedBlock[],
  newTokens: number,
  budget: number,
  limit?: ModelLimit,
  /** The blocks' summed tokens, when the caller keeps it (a turn then costs nothing per block). */
  blocksTokens = windowTokens(blocks),
  shares: RotationShares = DEFAULT_SHARES,
): RotationPlan | null {
  const perBlock = limit?.perBlock ?? 0;
  const total = blocksTokens + newTokens;
  const cost = total + perBlock * (blocks.length + 1);
  const overModel = limit !== undefined && cost > limit.cap;
  if ((total <= budget && !overModel) || blocks.length === 0) return null;
  return foldSpan(blocks, total, cost, budget, limit, shares);
}

/**
 * A fold of the oldest blocks down to the target share, whether or not the window is over its
 * budget: an import that already folded folds what it adds after. Null when the window is at
 * the target already (or holds only a summary).
 */
export function planFoldToTarget(blocks: readonly PlannedBlock[], budget: number, shares: RotationShares = DEFAULT_SHARES): RotationPlan | null {
  const total = windowTokens(blocks);
  return blocks.length === 0 ? null : foldSpan(blocks, total, total, budget, undefined, shares);
}

/**
 * The span a fold takes (the one place that chooses it, for turns, imports and their refolds):
 * the oldest blocks until the rest, with room for the summary, is at most `shares.target` of the
 * budget and of the model's limit. `total` and `cost` are the window's tokens and model cost.
 */
function foldSpan(blocks: readonly PlannedBlock[], total: number, cost: number, budget: number, limit: ModelLimit | undefined, shares: RotationShares): RotationPlan | null {
  const perBlock = limit?.perBlock ?? 0;
  const summaryRoom = Math.floor(budget * shares.summary);
  const costSummaryRoom = limit ? Math.floor(limit.cap * shares.summary) : 0;
  const target = Math.floor(budget * shares.target) - summaryRoom;
  const costTarget = limit ? Math.floor(limit.cap * shares.target) - costSummaryRoom - perBlock : Infinity;
  let take = 0;
  while (take < blocks.length && (total > target || cost > costTarget || (take === 1 && blocks[0].kind === 'summary'))) {
    total -= blocks[take].tokens;
    cost -= blocks[take].tokens + perBlock;
    take++;
  }
  if (take === 0) return null;
  // The span ends after an assistant reply: a question never stays without its answer, nor an answer
  // without its question (an oversized reply is folded whole with the question it answers).
  while (take < blocks.length && !startsExchange(blocks[take])) {
    total -= blocks[take].tokens;
    cost -= blocks[take].tokens + perBlock;
    take++;
  }
  let maxSummaryTokens = Math.min(summaryRoom, budget - total);
  if (limit) maxSummaryTokens = Math.min(maxSummaryTokens, costSummaryRoom, limit.cap - cost - perBlock);
  return {
    take,
    covers: [blocks[0].coversFrom, blocks[take - 1].coversTo],
    maxSummaryTokens: Math.max(0, maxSummaryTokens),
    remainingTokens: total,
  };
}

/** `take` moved forward past any block the live window may not start with: the fold then ends after an assistant reply. */
export function foldToExchange(blocks: readonly PlannedBlock[], take: number): number {
  while (take < blocks.length && !startsExchange(blocks[take])) take++;
  return take;
}

/** Whether the live window may start at `b`: a user message (a block without a role is taken as one). */
function startsExchange(b: PlannedBlock): boolean {
  return b.kind === 'summary' ? false : b.role === undefined || b.role === 'user';
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

/** The limit a window rotates at: its budget, or the model's context when that binds first. */
export function windowLimit(w: { budget_tokens: number; model_limit_tokens?: number }): { tokens: number; byModel: boolean } {
  const model = w.model_limit_tokens;
  return model !== undefined && model < w.budget_tokens ? { tokens: model, byModel: true } : { tokens: w.budget_tokens, byModel: false };
}

/**
 * The messages a rotation folded: from the first message block it took to its span's end. An
 * earlier summary folded in is not counted again, so a rotation notice and the rotation's record
 * (`from_seq`–`to_seq`) name the same span.
 */
export function foldedSpan(folded: ReadonlyArray<Pick<PlannedBlock, 'coversFrom' | 'kind'>>, toSeq: number): [number, number] {
  const first = folded.find((b) => b.kind === 'message') ?? folded[0];
  return [first?.coversFrom ?? toSeq, toSeq];
}
