import { contentWords } from '../../core/text/recall-query.js';
import { retrieve } from './retrieve.js';
import { SEARCH_QUERY_MAX_CHARS } from '../../core/text/search-query.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ChatMessage, ToolDefinition } from '../../providers/spec.js';
import type { BlockRow, EntityRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import type { ReplyToolCall } from '../generation/reply.js';
import type { Remembered } from './memory.js';
import { recallTokensOf } from './entity-rules.js';

/** What recall reads: the store, and the clock and ids of its log record. */
type RecallDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId' | 'limits'>;

/**
 * Recall: an entity with `recall` on is offered one tool, `recall`, that searches its
 * own transcript for what the window no longer holds. The engine runs it inside the turn; the
 * model then answers with what it found. Only the user message and the final reply are stored;
 * the rounds go to the turn's log record.
 */
export const RECALL_TOOL: ToolDefinition = {
  type: 'function',
  name: 'recall',
  description:
    'Search your earlier conversation with this user (what you no longer see) for words or a "quoted phrase". ' +
    'Returns the matching messages, most relevant first, each with its number and who said it.',
  parameters: { type: 'object', properties: { query: { type: 'string', description: 'the words to look for' } }, required: ['query'] },
};

/** Rounds of recall one turn may take before the model must answer. */
export const RECALL_ROUNDS_MAX = 3;
/**
 * Recall calls one round runs; a reply's further calls are each answered with an error. A model
 * asks for a handful; 2,000 in one reply would be 2,000 searches.
 */
export const RECALL_CALLS_MAX = 8;
/**
 * The longest arguments a call may have: a query of the limit with every character escaped
 * (`\u00e9`: six), and room for the rest. Longer ones are refused before they are parsed, so a
 * megabyte of query costs nothing (a 64 KiB one held the process for seconds).
 */
const RECALL_ARGS_MAX = SEARCH_QUERY_MAX_CHARS * 6 + 100;
/** The most one round's results may add to the prompt, and the share of the window's limit it may take. */
const RECALL_MAX_TOKENS = 1000;
const RECALL_SHARE = 0.2;

/** What the turn's recall rounds added to its prompt, and what they searched for. */
export interface RecallState {
  messages: ChatMessage[];
  /** Estimated tokens of `messages`, counted in the prompt's estimate (calibration, the fit). */
  tokens: number;
  /** Rounds taken: each is one reply of recall calls and their results. */
  rounds: number;
  /** Every call run: its query and the seqs it returned (a refused query is empty). */
  searches: Array<{ query: string; seqs: number[] }>;
  /** Tokens of the rounds' calls: what the model wrote in them is billed as reply. */
  callTokens: number;
  /** The pinned memory the model's remember calls set (remember.ts): written by the turn's commit. */
  remembered: Remembered[];
  /** Tokens of the transcript lines the rounds returned: together never more than the entity's recall bound. */
  found: number;
}

export function emptyRecall(): RecallState {
  return { messages: [], tokens: 0, rounds: 0, searches: [], callTokens: 0, remembered: [], found: 0 };
}

/** The reply's calls, when every one of them is a recall and the turn may take another round. */
export function recallCalls(entity: EntityRow, calls: readonly ReplyToolCall[], state: RecallState): ReplyToolCall[] | undefined {
  if (entity.recall !== 1 || calls.length === 0 || state.rounds >= RECALL_ROUNDS_MAX) return undefined;
  return calls.every((c) => c.name === RECALL_TOOL.name) ? [...calls] : undefined;
}

/**
 * Runs the calls and adds the round to the prompt: the model's calls, then one tool message each
 * (every call needs one, or the provider refuses the next request) with the messages found before
 * the window's live ones, within `limitTokens`' share. Calls past RECALL_CALLS_MAX are refused.
 */
export async function runRecallRound(
  deps: RecallDeps,
  entity: EntityRow,
  window: readonly BlockRow[],
  calls: ReplyToolCall[],
  state: RecallState,
  limitTokens: number,
): Promise<void> {
  const tok = await loadTokenEstimator();
  const bound = recallTokensOf(entity, deps.limits.recallTokens);
  const cap = Math.min(Math.max(50, Math.min(RECALL_MAX_TOKENS, Math.floor(limitTokens * RECALL_SHARE))), bound - state.found);
  const run = Math.min(calls.length, RECALL_CALLS_MAX);
  const results: ChatMessage[] = [];
  for (const [i, call] of calls.entries()) {
    const each = Math.floor(cap / run);
    const { query, text, seqs, tokens } = i >= run ? tooMany(calls.length) : each < MIN_CALL_TOKENS ? usedUp(bound) : await recall(deps, entity, liveFrom(window), call.arguments, each);
    state.found += tokens;
    if (i < run) state.searches.push({ query, seqs });
    results.push({ role: 'tool', tool_call_id: call.callId, content: text });
  }
  const assistant = echoedCalls(calls, run);
  state.messages.push(assistant, ...results);
  state.rounds++;
  const callTokens = tok.count(JSON.stringify(assistant.tool_calls));
  state.callTokens += callTokens;
  state.tokens += callTokens + results.reduce((n, m) => n + tok.count(m.content as string), 0);
}

/**
 * The model's calls as the next request repeats them. A refused call's arguments (past the cap,
 * or too long) are repeated as `{}`: its tool message says why, and the prompt stays small.
 */
function echoedCalls(calls: readonly ReplyToolCall[], run: number): Extract<ChatMessage, { role: 'assistant' }> {
  const args = (c: ReplyToolCall, i: number) => (i < run && c.arguments.length <= RECALL_ARGS_MAX ? c.arguments : '{}');
  return {
    role: 'assistant',
    content: null,
    tool_calls: calls.map((c, i) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: args(c, i) } })),
  };
}

/** One call's answer: what the model reads, and the recalled lines' seqs and tokens (none for a refusal). */
interface CallResult {
  query: string;
  text: string;
  seqs: number[];
  tokens: number;
}

function tooMany(calls: number): CallResult {
  return { query: '', text: `not run: recall takes at most ${RECALL_CALLS_MAX} calls a round, and this reply made ${calls}`, seqs: [], tokens: 0 };
}

/** A call's share of what is left of the turn's recall bound is under this: it is not run. */
const MIN_CALL_TOKENS = 12;

function usedUp(bound: number): CallResult {
  return { query: '', text: `not run: this turn's recall already returned its ${bound} tokens; answer with what you have`, seqs: [], tokens: 0 };
}

/** The first seq the window still holds as a message: recall looks before it. */
function liveFrom(window: readonly BlockRow[]): number | undefined {
  const first = window.find((b) => b.kind === 'message');
  return first?.coversFrom;
}

/** One search of the entity's own transcript, as the text the model reads; a call without words says so. */
async function recall(deps: RecallDeps, entity: EntityRow, beforeSeq: number | undefined, args: string, capTokens: number): Promise<CallResult> {
  // Measured before anything reads the arguments: a refusal costs the same for any length.
  if (args.length > RECALL_ARGS_MAX) return tooLong(`over ${SEARCH_QUERY_MAX_CHARS} characters (its arguments are ${args.length})`);
  const query = queryOf(args);
  if (query.length > SEARCH_QUERY_MAX_CHARS) return tooLong(`${query.length} characters`);
  if (!contentWords(query).length) return { query, text: 'recall needs a query with words in it, for example {"query": "the secret word"}', seqs: [], tokens: 0 };
  // The one ranked retriever (retrieve.ts): any word of the model's question, by its stem.
  const found = await retrieve(deps, entity, query, { beforeSeq, budgetTokens: capTokens });
  if (!found.messages.length) return { query, text: `nothing earlier in the conversation matches ${JSON.stringify(query)}`, seqs: [], tokens: 0 };
  return { query, text: found.text, seqs: found.messages.map((m) => m.seq), tokens: found.tokens };
}

function tooLong(length: string): CallResult {
  return { query: '', text: `recall's query is ${length}; the limit is ${SEARCH_QUERY_MAX_CHARS}`, seqs: [], tokens: 0 };
}

/** The call's `query`: its arguments are the model's JSON text, which may be anything. */
function queryOf(args: string): string {
  try {
    const parsed = JSON.parse(args) as { query?: unknown };
    return typeof parsed?.query === 'string' ? parsed.query : '';
  } catch {
    return '';
  }
}
