import { sleep } from '../../core/retry.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { TurnEvent } from '../../core/wire/entity-types.js';
import { ContextOverflowError } from '../../core/errors.js';
import { foldedSpan } from '../../core/window-plan.js';
import type { ChatMessage, ChatRequest } from '../../providers/spec.js';
import { wireUsage } from '../generation/completion.js';
import { overflowRetries, routeOf, runGeneration, sharedBackoffMs } from '../generation/model-call.js';
import { type Reply, emptyReply } from '../generation/reply.js';
import { autoRecall } from './auto-recall.js';
import { RECALL_ROUNDS_MAX, emptyRecall } from './recall.js';
import { clientCalls, engineCalls, engineTools, runEngineRound } from './remember.js';
import { type TurnState, stopped, tooLarge } from './turn-state.js';
import { type PreparedWindow, fixedParts, promptMessages, rotate } from './window/turn-window.js';

/**
 * Rotates (if needed) and streams the reply, announcing the turn with its first text. A prompt the
 * model refuses as too long teaches the route its limits, even mid-reply; the turn is then planned
 * again (see overflowRetries) if nothing reached the caller yet.
 */
export async function* rotateAndGenerate(turn: TurnState): AsyncGenerator<TurnEvent, { prepared: PreparedWindow; reply: Reply }> {
  let reply = emptyReply();
  // A streamed reply the shared context cut is continued on the prompt it had (see continuation()).
  let resume: PreparedWindow | undefined;
  for (let attempt = 0; ; attempt++) {
    let prepared = resume;
    if (!resume) [reply, turn.recall] = [emptyReply(), emptyRecall()];
    try {
      prepared ??= await prepare(turn, attempt === 0);
      for (;;) {
        for await (const text of runGeneration(routeOf(turn.deps, turn.model), replyRequest(turn, prepared), { into: reply, continues: turn.prefill })) {
          if (!turn.started) {
            turn.count.prefetch();
            yield* announce(turn, prepared);
          }
          yield { type: 'delta', text };
        }
        const calls = turn.signal.aborted ? undefined : engineCalls(turn, reply.toolCalls);
        if (!calls) {
          // The client gets only its own tools' calls (remember.ts: clientCalls).
          reply.toolCalls = await clientCalls(turn, reply.toolCalls);
          if (!reply.toolCalls.length && reply.finish === 'tool_calls') reply.finish = 'stop';
          return { prepared, reply: turn.prefill ? { ...reply, usage: undefined } : reply };
        }
        await runEngineRound(turn, prepared.head.blocks, calls, prepared.fit.limit?.cap ?? turn.entity.budgetTokens);
        Object.assign(reply, emptyReply());
      }
    } catch (err) {
      // Stopped after text: the provider's stream ends with an abort; what was streamed is the reply.
      if (prepared && turn.started && stopped(turn)) return { prepared, reply };
      if (!(err instanceof ContextOverflowError)) throw err;
      // A refused summary request was learned from where it was made.
      if (prepared) await turn.deps.calibration.learn(turn.model.routeKey, err, prepared.estimate + turn.recall.tokens, prepared.fit.reserveTokens);
      resume = prepared && continuation(turn, err, reply, attempt) ? await bounded(turn, prepared, reply) : undefined;
      // Already as long as the reply the route now bounds turns to: it ends where it was cut.
      if (resume && (resume.fit.replyCap ?? 1) <= 0) return { prepared: resume, reply: { ...reply, finish: 'length', usage: undefined } };
      if (!resume && (turn.started || attempt >= overflowRetries(err))) throw tooLarge(err, turn);
      // The other requests that filled a shared context need a moment to finish; the next attempt runs alone.
      if (err.shared) {
        turn.alone = true;
        await sleep(sharedBackoffMs(attempt), turn.signal);
      }
    }
  }
}

/** The turn's window, rotated if it must be, then what automatic recall adds to the new message (after the fold: it may recall what was just folded). */
async function prepare(turn: TurnState, mayProbe: boolean): Promise<PreparedWindow> {
  const prepared = await rotate(turn, mayProbe);
  turn.recalled = await autoRecall(turn, prepared);
  return prepared;
}

/**
 * Whether a reply the caller is already reading, cut because a context shared with other requests
 * ran out, can go on where it stopped: the same prompt is sent again ending with the reply so far,
 * which llama-server (the one server that shares a context so) continues, sending that text again
 * first. Only a plain reply (no tool calls, no recall round) is continued, as often as a shared
 * overflow is retried.
 */
function continuation(turn: TurnState, err: ContextOverflowError, reply: Reply, attempt: number): boolean {
  if (!err.shared || !turn.started || attempt >= overflowRetries(err) || reply.toolCalls.length || turn.recall.rounds) return false;
  turn.prefill = reply.text;
  return true;
}

/**
 * The same prompt with the reply bound the route now has (what it just learned: the context is
 * shared), less what the reply already holds: a cut reply goes on only up to the bound a turn on a
 * share of the context has, so it leaves no more in the server's context than such a turn would.
 */
async function bounded(turn: TurnState, prepared: PreparedWindow, reply: Reply): Promise<PreparedWindow> {
  const fixed = fixedParts(turn);
  const fit = await turn.deps.calibration.fit(turn.model, fixed.tokens, fixed.messages);
  if (fit.replyCap === undefined) return { ...prepared, fit: { ...prepared.fit, replyCap: undefined } };
  const sofar = Math.ceil((await loadTokenEstimator()).count(reply.text) * fit.factor);
  return { ...prepared, fit: { ...prepared.fit, replyCap: fit.replyCap - sofar } };
}

/**
 * The request for the prepared window. An entity with recall on is offered the recall tool beside
 * the request's own; after a recall round the model answers freely (a forced toolChoice applies
 * to the first request only).
 */
function replyRequest(turn: TurnState, prepared: PreparedWindow): ChatRequest {
  const { round = [], sampling, buffered } = turn.extras;
  const recalled = turn.recall.messages;
  const prefill: ChatMessage[] = turn.prefill ? [{ role: 'assistant', content: turn.prefill }] : [];
  turn.prompt = promptMessages(turn.entity.instructions, prepared, turn.memory);
  const messages = [...turn.prompt, ...round, ...recalled, ...prefill];
  const own = engineTools(turn);
  const tools = own.length ? [...own, ...(turn.extras.tools ?? [])] : turn.extras.tools;
  // After recall rounds the model answers: freely, or without tools once it has taken all it may.
  const toolChoice = !recalled.length ? turn.extras.toolChoice : turn.recall.rounds >= RECALL_ROUNDS_MAX ? 'none' : undefined;
  const cap = prepared.fit.replyCap;
  const maxTokens = cap === undefined ? undefined : Math.min(sampling?.maxTokens ?? cap, cap);
  return { messages, sampling, tools, toolChoice, maxTokens, purpose: 'reply', buffered, signal: turn.signal, ...(turn.alone ? { alone: true } : {}) };
}

/**
 * The turn's start, and its rotation if it had one: sent once, with the first output. `stores`
 * false: the reply is known to call tools, so nothing will be stored.
 */
export function* announce(turn: TurnState, prepared: PreparedWindow, stores = true): Generator<TurnEvent> {
  turn.started = true;
  turn.firstTokenAt = turn.deps.clock.now();
  const { entity } = turn;
  const recalledMessages = turn.recalled?.messages.length;
  yield {
    type: 'start', id: turn.replyId, model: entity.model, created: turn.created, entityId: entity.id, replayed: false,
    ...(stores ? {} : { stores }), ...(recalledMessages ? { recalledMessages } : {}),
  };
  if (prepared.plan && prepared.summary) {
    yield {
      type: 'rotation',
      covers: foldedSpan(turn.window.blocks.slice(0, prepared.plan.take), prepared.plan.covers[1]),
      summaryTokens: prepared.summary.tokens,
      windowTokens: prepared.plan.remainingTokens + prepared.summary.tokens,
      ...(prepared.summaryUsage?.requests ? { summaryUsage: wireUsage(prepared.summaryUsage) } : {}),
    };
  }
}
