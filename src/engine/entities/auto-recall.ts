import type { BlockRow } from '../../store/types.js';
import { type Retrieved, retrieve } from './retrieve.js';
import { recallTokensOf } from './entity-rules.js';
import { inViewRecall } from './window/recall-block.js';
import { type PreparedWindow, type WindowTurn, recallRoom } from './window/turn-window.js';

/** Recall mode `auto` as the store codes it. */
const AUTO = 2;

/**
 * Automatic recall: an `auto` entity's turn asks the retriever about the new message
 * over what the window no longer shows (the messages before its first live one), once the turn's
 * rotation is done, so a turn that folds can recall what it just folded. Lines still in view (a
 * live message, or an earlier turn's recall that is not folded yet) are not recalled again. What
 * it finds goes before the new message's text (recall-block.ts) and stays there while the message
 * is live; it is never stored as a message. Nothing found leaves the request as it would be
 * without recall.
 */
export async function autoRecall(turn: WindowTurn, prepared: PreparedWindow): Promise<Retrieved | undefined> {
  const { deps, entity } = turn;
  if (entity.recall !== AUTO) return undefined;
  const { head } = prepared;
  const live = head.blocks.find((b) => b.kind === 'message');
  const beforeSeq = live?.coversFrom ?? prepared.userBlock.coversFrom;
  const budgetTokens = await recallBudget(turn, prepared);
  if (budgetTokens < MIN_RECALL_TOKENS) return undefined;
  const previous = lastUserMessage(head.blocks);
  const found = await retrieve(deps, entity, turn.content, { beforeSeq, budgetTokens, context: previous?.content, inView: head.inView(), keep: !turn.create });
  if (!found.messages.length) return undefined;
  prepared.recall = inViewRecall(found);
  prepared.estimate += prepared.recall.tokens;
  return found;
}

function lastUserMessage(blocks: readonly BlockRow[]): BlockRow | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].kind === 'message' && blocks[i].role === 'user') return blocks[i];
  return undefined;
}

/**
 * The entity's recall bound (its own, else engine.recallTokens; at most half its budget), never more than a fifth of the model's context when it is known, nor more
 * than the room the window leaves under its budget and the model's limit (lines past it would force
 * a rotation, a summary call and a prompt the cache no longer holds, a turn early), and all the
 * recall in view together never more than RECALL_SHARE of the window's limit (on a window too small
 * for that share to hold an exchange, RECALL_FLOOR a turn; the room under the budget and the limit still bounds it).
 */
async function recallBudget(turn: WindowTurn, prepared: PreparedWindow): Promise<number> {
  const { deps, count, entity } = turn;
  const { fit, head } = prepared;
  const fifth = fit.contextTokens ? Math.floor(fit.contextTokens / fit.factor / 5) : Infinity;
  const share = inViewShare(Math.floor(Math.min(entity.budgetTokens, fit.limit?.cap ?? Infinity) * RECALL_SHARE), head.recallTokens);
  return Math.min(recallTokensOf(entity, deps.limits.recallTokens), fifth, share, recallRoom(turn, prepared, await count.exact()));
}

/**
 * What this turn may recall under the share: the share less what earlier turns' recall still holds
 * in view. A window whose share is under RECALL_FLOOR (a few hundred tokens) could hold no recalled
 * exchange at all that way, and the filler earlier turns recalled would keep out the line a
 * question is about: there each turn may recall RECALL_FLOOR for itself.
 */
function inViewShare(tenth: number, inView: number): number {
  return tenth <= RECALL_FLOOR ? RECALL_FLOOR : tenth - inView;
}

/**
 * The most of the window's limit the recall in view may take, all turns' together. What a turn
 * recalls stays in view until it is folded, so recall that took the room as it came brought the
 * next rotation within a few turns: on llama-server at 2,048 tokens, 40 summaries per 100 turns
 * against 13 without recall (docs/performance.md#rotation-and-the-prompt-cache). A fold frees it.
 */
const RECALL_SHARE = 0.1;
/** The least share: on a smaller one, what a turn may recall whatever earlier turns hold in view, so a small window can still recall an exchange. */
const RECALL_FLOOR = 64;

/** Less room than this recalls nothing: not even one short line would fit. */
const MIN_RECALL_TOKENS = 24;
