import { MgptError } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ChatMessage, ToolDefinition } from '../../providers/spec.js';
import type { BlockRow, EntityRow, MemoryRow } from '../../store/types.js';
import { memoryOutcome } from '../../store/memory-outcome.js';
import type { EngineDeps } from '../deps.js';
import type { ReplyToolCall } from '../generation/reply.js';
import { type PinnedMemory, checkLabel, checkText, memoryWrite, overLimits } from './memory.js';
import { RECALL_CALLS_MAX, RECALL_ROUNDS_MAX, RECALL_TOOL, type RecallState, recallCalls, runRecallRound } from './recall.js';

/**
 * The memory tool (opt-in with `--memory-tool`): the model is offered `remember`, which
 * sets one pinned memory block. The engine runs it inside the turn, as it runs recall: the model
 * is told what changed and answers; the change is written by the turn's commit (nothing of a
 * failed or cancelled turn stays), goes to the turn's log record with its text before and after,
 * and shows from the next turn on. Only the user message and the final reply are stored.
 */
export const REMEMBER_TOOL: ToolDefinition = {
  type: 'function',
  name: 'remember',
  description:
    'Pin a fact so you keep seeing it in every later turn (under "Pinned memory"), however long the conversation grows. ' +
    'Sets the block named `label` to `text`, replacing what it held: write the whole block, not only what is new.',
  parameters: {
    type: 'object',
    properties: {
      label: { type: 'string', description: 'the block\'s name: letters, digits, "_", "-" or ".", for example "user" or "project"' },
      text: { type: 'string', description: 'everything the block should hold from now on' },
    },
    required: ['label', 'text'],
  },
};

/** What the engine's own tools need of a turn. */
export interface ToolTurn {
  deps: EngineDeps;
  entity: EntityRow;
  recall: RecallState;
  memory?: PinnedMemory;
  extras: { memoryTool?: boolean };
}

/** The tools the engine itself answers for this turn's entity: recall, remember, both or none. */
export function engineTools(turn: ToolTurn): ToolDefinition[] {
  return [...(turn.entity.recall === 1 ? [RECALL_TOOL] : []), ...(offersMemoryTool(turn) ? [REMEMBER_TOOL] : [])];
}

/** The send's own say (on or off, for this turn), else the entity's setting. */
export function offersMemoryTool(turn: Pick<ToolTurn, 'entity' | 'extras'>): boolean {
  return turn.extras.memoryTool ?? turn.entity.memoryTool === 1;
}

/** The reply's calls when the engine answers every one of them (recall, remember) and the turn may take another round. */
export function engineCalls(turn: ToolTurn, calls: readonly ReplyToolCall[]): ReplyToolCall[] | undefined {
  if (!offersMemoryTool(turn) || !calls.length) return recallCalls(turn.entity, calls, turn.recall);
  if (turn.recall.rounds >= RECALL_ROUNDS_MAX) return undefined;
  const ours = (c: ReplyToolCall) => c.name === REMEMBER_TOOL.name || (c.name === RECALL_TOOL.name && turn.entity.recall === 1);
  return calls.every(ours) ? [...calls] : undefined;
}

/**
 * The calls of a reply the engine does not answer (one that also calls the client's tools, or a
 * round past RECALL_ROUNDS_MAX) as the client gets them: without the engine's own, which the
 * client never defined. Those are dropped unanswered: the model was told nothing of them, so a
 * remember call among them stores nothing. What earlier rounds remembered, the model was told;
 * the tool round stores it (storeRemembered). The model wrote the dropped calls all the same:
 * they are billed with the rounds' calls.
 */
export async function clientCalls(turn: ToolTurn, calls: readonly ReplyToolCall[]): Promise<ReplyToolCall[]> {
  const own = new Set(engineTools(turn).map((t) => t.name));
  const dropped = calls.filter((c) => own.has(c.name));
  if (dropped.length) {
    const tok = await loadTokenEstimator();
    turn.recall.callTokens += tok.count(JSON.stringify(dropped.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } }))));
  }
  return calls.filter((c) => !own.has(c.name));
}

/**
 * A turn that ends as a tool round stores no messages, but the model was told "remembered" by
 * its earlier rounds: those blocks are set now, each with its history row, as the commit of a
 * stored turn would set them.
 */
export async function storeRemembered(turn: ToolTurn): Promise<void> {
  for (const r of turn.recall.remembered) await turn.deps.store.memory.write(r.write);
}

/** Runs one round of the engine's calls: recall's through recall.ts, remember's here; each call gets its tool message. */
export async function runEngineRound(turn: ToolTurn, window: readonly BlockRow[], calls: ReplyToolCall[], limitTokens: number): Promise<void> {
  const remember = calls.filter((c) => c.name === REMEMBER_TOOL.name);
  const recall = calls.filter((c) => c.name !== REMEMBER_TOOL.name);
  if (recall.length) await runRecallRound(turn.deps, turn.entity, window, recall, turn.recall, limitTokens);
  if (remember.length) await rememberRound(turn, remember);
}

/**
 * Remember calls one round runs, as many as recall's: each one run is a write and a history row,
 * so a reply of 1,000 calls must not make 1,000. The rest are each answered "not run".
 */
export const REMEMBER_CALLS_MAX = RECALL_CALLS_MAX;

async function rememberRound(turn: ToolTurn, calls: ReplyToolCall[]): Promise<void> {
  const tok = await loadTokenEstimator();
  const run = Math.min(calls.length, REMEMBER_CALLS_MAX);
  const results: ChatMessage[] = [];
  for (const [i, call] of calls.entries()) {
    const content = i < run ? await remember(turn, call.arguments) : `not run: remember takes at most ${REMEMBER_CALLS_MAX} calls a round, and this reply made ${calls.length}`;
    results.push({ role: 'tool', tool_call_id: call.callId, content });
  }
  // A call not run is repeated as `{}`: its tool message says why, and the prompt stays small.
  const assistant: ChatMessage = {
    role: 'assistant', content: null,
    tool_calls: calls.map((c, i) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: i < run ? c.arguments : '{}' } })),
  };
  const state = turn.recall;
  state.messages.push(assistant, ...results);
  state.rounds++;
  const callTokens = tok.count(JSON.stringify(assistant.tool_calls));
  state.callTokens += callTokens;
  state.tokens += callTokens + results.reduce((n, m) => n + tok.count(m.content as string), 0);
}

/** One remember call: the block set (for the commit) and what the model is told, or why it was refused. */
async function remember(turn: ToolTurn, args: string): Promise<string> {
  let label: string;
  let text: string;
  try {
    const parsed = JSON.parse(args) as { label?: unknown; text?: unknown };
    label = checkLabel(parsed?.label);
    text = checkText(parsed?.text);
  } catch (err) {
    return `not remembered: ${err instanceof MgptError ? err.message : 'the arguments must be JSON like {"label": "user", "text": "..."}'}`;
  }
  const view = memoryView(turn);
  const write = await memoryWrite(turn.deps, turn.entity.id, label, text, 'model');
  const outcome = memoryOutcome(view, write);
  if (outcome.kind === 'over') return `not remembered: ${overLimits(write, outcome).message}`;
  if (outcome.kind === 'same') return `block "${label}" already holds exactly that`;
  turn.recall.remembered.push({ label, before: outcome.before?.text ?? null, after: text, write });
  const { blocks, tokens } = write.limits;
  const used = view.reduce((n, b) => n + b.tokens, 0) - (outcome.before?.tokens ?? 0) + write.tokens;
  return `remembered: block "${label}" is set (${write.tokens} tokens; pinned memory holds ${used} of ${tokens} tokens, ${view.length + (outcome.before ? 0 : 1)} of ${blocks} blocks). You will see it from the next turn on.`;
}

/** The blocks as the turn started with them, with this turn's earlier remember calls applied. */
function memoryView(turn: ToolTurn): MemoryRow[] {
  const view = new Map((turn.memory?.blocks ?? []).map((b) => [b.label, b]));
  for (const r of turn.recall.remembered) view.set(r.label, { label: r.label, text: r.after, tokens: r.write.tokens, updatedAt: r.write.at });
  return [...view.values()];
}
