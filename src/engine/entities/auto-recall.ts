import type { ChatModel } from '../../providers/spec.js';
import type { BlockRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { type Retrieved, retrieve } from './retrieve.js';
import type { WindowTurn } from './window/turn-window.js';

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
  const budgetTokens = await recallBudget(deps, turn.model);
  const found = await retrieve(deps, entity, turn.content, { beforeSeq, budgetTokens, context: previous?.content });
  return found.messages.length ? found : undefined;
}

function lastUserMessage(blocks: readonly BlockRow[]): BlockRow | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].kind === 'message' && blocks[i].role === 'user') return blocks[i];
  return undefined;
}

/** engine.recallTokens, and never more than a fifth of the model's context when it is known. */
async function recallBudget(deps: EngineDeps, model: ChatModel): Promise<number> {
  const fit = await deps.calibration.fit(model, 0, 0);
  const fifth = fit.contextTokens ? Math.floor(fit.contextTokens / fit.factor / 5) : Infinity;
  return Math.min(deps.limits.recallTokens, fifth);
}
