import type { BlockRow } from '../../store/types.js';
import { type Retrieved, retrieve } from './retrieve.js';
import { RECALL_PREAMBLE_TOKENS, type WindowTurn, roomForRecall } from './window/turn-window.js';

/** Recall mode `auto` as the store codes it. */
const AUTO = 2;

/**
 * Automatic recall (issue 32): before an `auto` entity's turn, the retriever is asked about the new
 * message over what the window no longer shows (the messages before its first live one). What it
 * finds goes into the prompt as one message and is never stored; nothing found leaves the turn's
 * request exactly as it would be without recall.
 */
export async function autoRecall(turn: WindowTurn): Promise<Retrieved | undefined> {
  const { deps, entity, window } = turn;
  if (entity.recall !== AUTO) return undefined;
  const live = window.blocks.find((b) => b.kind === 'message');
  const beforeSeq = live?.coversFrom ?? entity.transcriptMessages + 1;
  const previous = lastUserMessage(window.blocks);
  const budgetTokens = await recallBudget(turn);
  if (budgetTokens < MIN_RECALL_TOKENS) return undefined;
  const found = await retrieve(deps, entity, turn.content, { beforeSeq, budgetTokens, context: previous?.content });
  return found.messages.length ? found : undefined;
}

function lastUserMessage(blocks: readonly BlockRow[]): BlockRow | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].kind === 'message' && blocks[i].role === 'user') return blocks[i];
  return undefined;
}

/**
 * engine.recallTokens, and never more than a fifth of the model's context when it is known. Nor
 * more than the room the window leaves under the model's limit: recalled lines that pushed the
 * window over it would force a rotation (a summary call, and a prompt the cache no longer holds)
 * a turn early. A turn that rotates anyway recalls more, its rotation makes the room, but never
 * more than half of what the instructions and the new message leave: the window keeps at least
 * the room the recall takes (a 512-token model with half kept for the reply had none left for
 * the message itself).
 */
async function recallBudget(turn: WindowTurn): Promise<number> {
  const { deps, entity, model, count } = turn;
  // The head as the turn's fit counts it: the instructions and the pinned memory (issue 33).
  const fit = await deps.calibration.fit(model, entity.instructionsTokens + (turn.memory?.tokens ?? 0), (entity.instructions ? 1 : 0) + (turn.memory ? 1 : 0));
  const fifth = fit.contextTokens ? Math.floor(fit.contextTokens / fit.factor / 5) : Infinity;
  const budget = Math.min(deps.limits.recallTokens, fifth);
  const room = roomForRecall(turn, fit);
  if (!room || !fit.limit) return budget;
  if (!room.rotates) return Math.min(budget, room.lines);
  return Math.min(budget, Math.floor((fit.limit.cap - count.bound - 2 * fit.limit.perBlock - RECALL_PREAMBLE_TOKENS) / 2));
}

/** Less room than this recalls nothing: not even one short line would fit. */
const MIN_RECALL_TOKENS = 24;
