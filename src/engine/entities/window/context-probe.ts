import { ContextOverflowError } from '../../../core/errors.js';
import type { ChatMessage, ChatModel } from '../../../providers/spec.js';
import { type RouteFit, promptEstimateOf } from '../../generation/calibration.js';
import { readGeneration, routeOf } from '../../generation/model-call.js';
import type { EntityRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import type { WindowState } from './window-state.js';

/** What a probe reads of the turn (a WindowTurn has it). */
interface ProbeTurn {
  deps: EngineDeps;
  entity: EntityRow;
  model: ChatModel;
  window: WindowState;
  content: string;
  signal: AbortSignal;
}

/**
 * Whether the route's server has another context than the one learned from it (a restart with
 * another `-c`), asked when a rotation would rest on that learned value. A server that reports its
 * context (llama-server's `/props`) is believed, and no prompt is sent. Otherwise the context is
 * probed with a prompt past it, at most once per backoff that doubles with each refusal (
 * a probe at every rotation cost a refused prompt each, 24 in 200 turns).
 */
export async function contextChanged(turn: ProbeTurn, fit: RouteFit, newTokens: number): Promise<boolean> {
  const { deps, model } = turn;
  const reported = await model.serverContext?.(turn.signal);
  if (reported !== undefined) return deps.calibration.reported(model.routeKey, reported.contextTokens);
  if (!deps.calibration.mayProbe(model.routeKey)) return false;
  const grew = await contextGrew(turn, fit, newTokens);
  deps.calibration.probed(model.routeKey, grew);
  return grew;
}

/** How far past the learned context a probe's prompt goes, so an acceptance proves the context grew. */
const PROBE_OVER = 1.1;

/**
 * Asks the server whether its context has grown past what was learned from it (a restart with a
 * larger -c): the turn's own prompt, then filler to just past the learned context, for one token.
 * A refusal costs the server a tokenization and teaches the same value again (false). An answer
 * means the context grew: the learned value is forgotten (true), and the turn plans without it.
 * The prompt starts as the turn's does, so what the server processed serves the turn from its cache.
 */
async function contextGrew(turn: ProbeTurn, fit: RouteFit, newTokens: number): Promise<boolean> {
  const { deps, entity, model, window } = turn;
  const fixed = entity.instructions ? 1 : 0;
  const promptEstimate = promptEstimateOf((fixed ? entity.instructionsTokens : 0) + window.tokens + window.recallTokens + newTokens, fixed + window.blocks.length + 2);
  const learned = fit.contextTokens ?? 0;
  // Digits and spaces: at least one of the model's tokens each, whatever its vocabulary.
  const past = Math.max(1, Math.ceil(learned * PROBE_OVER - promptEstimate * fit.factor));
  const filler = Array.from({ length: past }, (_, i) => i % 10).join(' ');
  const messages: ChatMessage[] = [...window.prompt(entity.instructions, turn.content), { role: 'user', content: filler }];
  let counted: number | undefined;
  try {
    counted = (await readGeneration(routeOf(deps, model), { messages, maxTokens: 1, purpose: 'reply', signal: turn.signal }, { probe: true })).usage?.inputTokens;
  } catch (err) {
    if (!(err instanceof ContextOverflowError)) throw err;
    // Only the context it names: the filler says nothing about how the model counts the conversation.
    if (err.contextTokens !== undefined) await deps.calibration.confirmContext(model.routeKey, err.contextTokens);
    return false;
  }
  // Taken, but the server counted no more than it was known to hold: nothing new.
  if (counted !== undefined && counted <= learned) return false;
  await deps.calibration.forgetContext(model.routeKey);
  return true;
}
