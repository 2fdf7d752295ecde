import type { LogRow } from '../../store/types.js';
import { cachedOf, logRow } from '../platform/logs.js';
import type { TurnState } from './turn-state.js';

/** What the turn's model call came to, as its log record gives it. */
export interface TurnOutcome {
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
  costUsd: number;
  /** The calls a reply that is returned, not stored, asked for. */
  toolCalls?: number;
}

/**
 * Every entity turn's generation record, written in the turn's own unit of work: which entity and
 * route, what the final request counted and cost, how long the turn took, which messages recall
 * brought back (their seqs, never their text), what was searched and what the model pinned. The
 * owner is the account's user, read by the budget check under the lease, so the record costs no
 * round trip of its own.
 */
export function turnLog(turn: TurnState, out: TurnOutcome): LogRow {
  const { deps, entity, recall: state } = turn;
  const toolCalls = out.toolCalls ?? 0;
  const recalled = turn.recalled?.messages ?? [];
  const searched = state.rounds ? { rounds: state.rounds, recall: state.searches } : {};
  // What the model pinned (remember.ts), with the text before and after.
  const memory = state.remembered.length ? { memory: state.remembered.map(({ label, before, after }) => ({ label, before, after })) } : {};
  const totalMs = deps.clock.now() - turn.t0;
  return logRow(deps, {
    kind: 'text', userId: turn.ownerUserId, gameId: null, universeId: null, requestId: null, model: entity.model, providerModel: turn.model.modelId,
    status: 'ok', error: null, inputTokens: out.inputTokens, outputTokens: out.outputTokens, costUsd: out.costUsd, totalMs, providerMs: totalMs,
    request: {
      facade: toolCalls ? 'tool_calls' : state.rounds || recalled.length ? 'recall' : 'entity', entityId: entity.id, route: turn.model.routeKey, ...searched, ...memory,
      ...(recalled.length ? { recalled, recalledSeqs: recalled.map((m) => m.seq) } : {}),
    },
    response: { ...cachedOf(out.cachedTokens), ...(toolCalls ? { toolCalls } : {}) },
  });
}
