import { BadRequestError } from '../../core/errors.js';
import { type GenerationResponse, type RespondInput, type ToolCallRef, toolResultContent } from '../../core/wire/universe-types.js';
import type { UniverseMessageRow } from '../../store/types.js';
import { complete } from './respond-settle.js';
import { answered, finishedToolTurn, lastToolCallMessage, pendingCalls, unansweredCalls } from './tool-calls.js';
import type { Turn } from './universe-turn.js';

/** Stores the user message (unless a resumed turn already did), with the request's `pending` record. */
export async function takeUserInput(turn: Turn): Promise<undefined> {
  const waiting = unansweredCalls(turn.messages);
  if (waiting.length) {
    const ids = waiting.map((c) => c.id).join(', ');
    throw new BadRequestError(`a turn is waiting for tool results (${ids}); send toolResults, or move statePointer back`, {
      errors: [{ field: 'toolResults', message: `required while calls ${ids} are pending` }],
    });
  }
  if (turn.userSeq !== null) return undefined;
  const row = turn.newRow({ role: 'user', content: turn.input.userInput, toolCalls: null, toolCallId: null, toolName: null, toolOk: null });
  turn.userSeq = row.seq;
  await turn.write([row], { request: turn.request('pending') });
  return undefined;
}

/**
 * Stores the results new for the pending calls. When some calls are still unanswered, or the
 * results were for a continuation that already completed, the turn ends here without the provider.
 */
export async function takeToolResults(turn: Turn, results: NonNullable<RespondInput['toolResults']>): Promise<GenerationResponse | undefined> {
  const messages = turn.messages;
  const pending = pendingCalls(messages);
  if (pending.length === 0) {
    const replay = finishedToolTurn(messages, results.map((r) => r.callId));
    if (replay === null) {
      throw new BadRequestError('no turn is waiting for tool results', {
        errors: results.map((r, i) => ({ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` })),
      });
    }
    // A retry of a continuation that already completed: answer it again, store nothing new.
    return complete(turn, [], messages.slice(0, replay), messages[replay], { called: false });
  }
  const fresh = newResults(turn, pending, results);
  const waiting = unansweredCalls([...messages, ...fresh]);
  if (!waiting.length) {
    await turn.write(fresh);
    return undefined;
  }
  // Results for some calls only: the provider cannot continue until all are answered.
  const last = lastToolCallMessage(messages)!;
  return complete(turn, fresh, [...messages, ...fresh], last, { called: false, toolCalls: waiting });
}

/** Results are cumulative: those answered earlier (this round or a previous one) are skipped. */
export function newResults(turn: Turn, pending: ToolCallRef[], results: NonNullable<RespondInput['toolResults']>): UniverseMessageRow[] {
  const messages = turn.messages;
  const known = new Set(pending.map((c) => c.id));
  const bad = results.flatMap((r, i) =>
    known.has(r.callId) || answered(messages, r.callId) ? [] : [{ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` }],
  );
  if (bad.length) throw new BadRequestError('tool results for calls that are not pending', { errors: bad });
  const fresh: UniverseMessageRow[] = [];
  for (const r of results) {
    if (!known.has(r.callId) || answered(messages, r.callId) || fresh.some((f) => f.toolCallId === r.callId)) continue;
    const row = { role: 'tool' as const, content: toolResultContent(r), toolCalls: null, toolCallId: r.callId, toolName: r.name, toolOk: r.ok ? 1 : 0 };
    fresh.push(turn.newRow(row, fresh.length));
  }
  return fresh;
}
