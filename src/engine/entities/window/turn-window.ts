import type { Retrieved } from '../retrieve.js';
import type { PinnedMemory } from '../memory.js';
import { ContextOverflowError } from '../../../core/errors.js';
import { type TokenEstimator, loadTokenEstimator, loadedTokenEstimator, tokenUpperBound } from '../../../core/text/tokens.js';
import { type RotationPlan, planRotation } from '../../../core/window-plan.js';
import type { ChatMessage, ChatModel } from '../../../providers/spec.js';
import type { BlockRow, EntityRow } from '../../../store/types.js';
import { PER_MESSAGE_TOKENS, type RouteFit, promptEstimateOf } from '../../generation/calibration.js';
import type { EngineDeps } from '../../deps.js';
import { routeOf } from '../../generation/model-call.js';
import { contextChanged } from './context-probe.js';
import { type SummaryUsage, summarizeSpan, summaryBlock } from './summarize.js';
import { WindowState } from './window-state.js';
import { type InViewRecall, RECALL_WRAP_TOKENS, withRecall } from './recall-block.js';
import { shapeMessages } from '../../../core/request-shape.js';

/** What planning a turn's window reads. */
export interface WindowTurn {
  deps: EngineDeps;
  entity: EntityRow;
  model: ChatModel;
  /** The window before this turn. */
  window: WindowState;
  content: string;
  count: MessageCount;
  signal: AbortSignal;
  /** What automatic recall found for this turn (it goes in the new message: PreparedWindow.recall). */
  recalled?: Retrieved;
  /** The entity's pinned memory: one message right after the instructions, fitted like them. */
  memory?: PinnedMemory;
  /** Set when the turn creates its entity (a branch): the store holds none of its transcript yet. */
  create?: object;
}

/**
 * The new message's token count. The tokenizer's tables take ~0.3 s to load; the first turn of a
 * process does not wait for them unless it must: a byte count bounds the token count from above,
 * which settles the budget check and rotation planning in the common case, so the provider call
 * starts at once and the exact count is taken after the reply.
 */
export class MessageCount {
  private known: number | undefined;
  private loading: Promise<TokenEstimator> | undefined;

  constructor(readonly content: string) {
    this.known = loadedTokenEstimator()?.count(content);
  }

  /**
   * Loads the tables once the reply has started, between two of its chunks: loading them before
   * the request (~20-30 ms of blocked thread) would delay the request itself.
   */
  prefetch(): void {
    if (this.known !== undefined || this.loading) return;
    setImmediate(() => (this.loading ??= loadTokenEstimator()).catch(() => undefined));
  }

  /** Exact when known, else a bound from above. */
  get bound(): number {
    return this.known ?? tokenUpperBound(this.content);
  }

  async exact(): Promise<number> {
    this.known ??= (await (this.loading ??= loadTokenEstimator())).count(this.content);
    return this.known;
  }
}

/** The window a reply is generated from. */
export interface PreparedWindow {
  fit: RouteFit;
  plan: RotationPlan | null;
  summary?: BlockRow;
  /** What the summary's requests cost, as the provider counted them. */
  summaryUsage?: SummaryUsage;
  /** The window before the new message: summary?, then the kept blocks (the turn's own window without a rotation). */
  head: WindowState;
  /** The new message as a block; its tokens are a bound until made exact at the commit. */
  userBlock: BlockRow;
  /** The prompt's estimate, as the calibration compares it with the provider's count. */
  estimate: number;
  /** What automatic recall put before the new message's text (auto-recall.ts), counted in `estimate`. */
  recall?: InViewRecall;
}

/**
 * Plans the window for the route's limits, rotating (with a summary) when the budget or the model
 * needs it. Without a rotation nothing here walks the window: its sums are kept (window-state.ts).
 * What live user messages recalled counts as theirs (in the budget, and folded with them).
 */
export async function rotate(turn: WindowTurn, mayProbe = false): Promise<PreparedWindow> {
  const { deps, entity, model, window, count } = turn;
  const blocks = window.blocks;
  const fixed = fixedParts(turn);
  let fit = await deps.calibration.fit(model, fixed.tokens, fixed.messages);
  let plan = await planFor(turn, fit);
  // A rotation only for a context learned from the server: first ask whether it has grown.
  if (plan && mayProbe && fit.retest && !planRotation(window.plannedBlocks(), await count.exact(), entity.budgetTokens, undefined, viewTokens(window), deps.limits.rotation)) {
    if (await contextChanged(turn, fit, await count.exact())) {
      fit = await deps.calibration.fit(model, fixed.tokens, fixed.messages);
      plan = await planFor(turn, fit);
    }
  }
  const folded = plan ? await summarize(turn, plan, fit) : undefined;
  const summary = folded?.block;
  const head = plan && summary ? WindowState.of([summary, ...blocks.slice(plan.take)], window.recalled) : window;
  const lastPosition = blocks.length ? blocks[blocks.length - 1].position : 0;
  const seq = entity.transcriptMessages + 1;
  // The prompt itself needs only the text; the bound settles the model's limit unless it is close.
  const user: BlockRow = {
    id: deps.newId(), position: lastPosition + 1, kind: 'message', role: 'user', content: turn.content,
    tokens: count.bound, coversFrom: seq, coversTo: seq,
  };
  const headCost = fit.limit ? modelCost(head, fit.limit.perBlock) : 0;
  if (fit.limit && headCost + user.tokens + fit.limit.perBlock > fit.limit.cap) {
    user.tokens = await count.exact();
    if (headCost + user.tokens + fit.limit.perBlock > fit.limit.cap) throw doesNotFit(turn, fit, user.tokens);
  }
  const estimate = promptEstimateOf(fixed.tokens + viewTokens(head) + user.tokens, fixed.messages + head.blocks.length + 1);
  return { fit, plan, summary, summaryUsage: folded?.usage, head, userBlock: user, estimate };
}

/** The window's tokens as the prompt carries them: its blocks and what its user messages recalled. */
function viewTokens(w: WindowState): number {
  return w.tokens + w.recallTokens;
}

/** The rotation the turn needs for the budget and `fit`'s limit, or null. */
async function planFor(turn: WindowTurn, fit: RouteFit): Promise<RotationPlan | null> {
  const { deps, entity, window, count } = turn;
  const shares = deps.limits.rotation;
  // Rotation is monotonic in the new message's size: if the bound needs none, neither does the exact count.
  const blocks = window.plannedBlocks();
  const plan = planRotation(blocks, count.bound, entity.budgetTokens, fit.limit, viewTokens(window), shares);
  return plan && planRotation(blocks, await count.exact(), entity.budgetTokens, fit.limit, viewTokens(window), shares);
}

/** Folds the plan's span of the window into one summary block. */
async function summarize(turn: WindowTurn, plan: RotationPlan, fit: RouteFit): Promise<{ block: BlockRow; usage: SummaryUsage }> {
  const { deps, model, window } = turn;
  const tok = await loadTokenEstimator();
  // As the turns sent them (recalled lines included), so the request starts with their cached prefix.
  const span = window.rendered().slice(0, plan.take);
  // The instructions and pinned memory as the entity's turns send them: the summary request then starts with their prefix.
  const instructions = { text: turn.entity.instructions, tokens: turn.entity.instructionsTokens, ...(turn.memory ? { memory: turn.memory } : {}) };
  const { text, usage } = await summarizeSpan(routeOf(deps, model), tok, span, plan.maxSummaryTokens, fit, deps.calibration, turn.signal, instructions);
  return { block: summaryBlock(deps.newId(), span, text, tok.count(text), plan.covers), usage };
}

/** The message (with the instructions) cannot fit the model however much is folded. */
function doesNotFit(turn: WindowTurn, fit: RouteFit, messageTokens: number): ContextOverflowError {
  const room = Math.max(0, (fit.limit?.cap ?? 0) - PER_MESSAGE_TOKENS);
  const context = fit.share
    ? `a turn's share of the model's shared context (${fit.contextTokens} of ${fit.share.contextTokens} tokens, cut for ${fit.share.slots} slots; ${fit.reserveTokens} kept for the reply)`
    : `the model's context (${fit.contextTokens} tokens, ${fit.reserveTokens} kept for the reply)`;
  const larger = fit.share
    ? `split the message into smaller ones, or plan turns for more of the shared context: mgpt config set models.${turn.entity.model}.sharedSlots ${Math.max(1, Math.floor(fit.share.slots / 2))}`
    : 'split the message into smaller ones, or route the entity model to a model with a larger context';
  return new ContextOverflowError(`message is about ${messageTokens} tokens, but ${context} leaves room for about ${room} after the instructions`, {
    contextTokens: fit.contextTokens,
    hint: turn.entity.instructionsTokens > room ? `shorten the instructions: mgpt entities update ${turn.entity.id} --instructions ...` : larger,
  });
}

/** What the request is made from: the window it is answered from, and the new message. */
export type PromptWindow = Pick<PreparedWindow, 'head' | 'recall'> & { userBlock: Pick<BlockRow, 'content'> };

/**
 * The provider messages of an entity turn, up to its user message (docs/entities-and-memory.md#the-request-mgpt-sends):
 * one system message (the instructions, then the pinned memory, then the window's summaries), then
 * the live messages, each user message after what its turn recalled, then the new message after
 * what this turn recalls. Between rotations a turn's request is the previous one, its reply and
 * the new message: a prompt cache serves everything before.
 */
export function promptMessages(instructions: string, prepared: PromptWindow, memory?: PinnedMemory): ChatMessage[] {
  const { content } = prepared.userBlock;
  const messages = prepared.head.prompt(instructions, prepared.recall ? withRecall(content, prepared.recall.text) : content);
  if (memory) messages.splice(instructions ? 1 : 0, 0, { role: 'system', content: memory.text });
  return shapeMessages(messages);
}

/** What of the prompt is fitted before the window: the instructions and the pinned memory. */
export function fixedParts(turn: Pick<WindowTurn, 'entity' | 'memory'>): { tokens: number; messages: number } {
  return {
    tokens: turn.entity.instructionsTokens + (turn.memory?.tokens ?? 0),
    messages: (turn.entity.instructions ? 1 : 0) + (turn.memory ? 1 : 0),
  };
}

/**
 * The room the window leaves for this turn's recalled lines under the entity's budget and the
 * model's limit, once the turn's rotation (if any) is done and the new message is in; what is
 * recalled stays in view, so it is counted as the window is.
 */
export function recallRoom(turn: Pick<WindowTurn, 'entity'>, prepared: PreparedWindow, messageTokens: number): number {
  const { head, fit } = prepared;
  const budget = turn.entity.budgetTokens - viewTokens(head) - messageTokens;
  const model = fit.limit ? fit.limit.cap - modelCost(head, fit.limit.perBlock) - messageTokens - fit.limit.perBlock : Infinity;
  return Math.min(budget, model) - RECALL_WRAP_TOKENS;
}

/** The window's size as the model limit counts it, from the kept sums. */
function modelCost(head: WindowState, perBlock: number): number {
  return viewTokens(head) + perBlock * head.blocks.length;
}
