import { sleep } from '../../core/retry.js';
import type { EntityCompletion, TurnEvent, Usage } from '../../core/entity-types.js';
import {
  BadRequestError,
  CancelledError,
  TURN_CANCELLED,
  ConflictError,
  ContextOverflowError,
  NotFoundError,
  ProviderError,
  isAbortError,
} from '../../core/errors.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/tokens.js';
import type { ChatMessage, Sampling, StreamPart, ToolChoice, ToolDefinition } from '../../providers/spec.js';
import type { BlockRow, EntityImport, EntityRow, EntityTurnWrite, LeaseRow, LogRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { providerErrorClass } from '../events.js';
import { type Reply, absorb, emptyReply, replyMessage } from '../generation/reply.js';
import { type HeldLease, type LeaseRequest, entitySubject, withLease } from '../lease.js';
import { isMetered, requireFunds } from '../platform/billing.js';
import { reserveReply } from '../platform/rate-limits.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import type { SummaryUsage } from './window/summarize.js';
import { type RecallState, RECALL_ROUNDS_MAX, emptyRecall, recallLog } from './recall.js';
import { pinnedMemory } from './memory.js';
import { engineCalls, engineTools, runEngineRound } from './remember.js';
import { MessageCount, type PreparedWindow, type WindowTurn, fixedParts, promptMessages, rotate } from './window/turn-window.js';
import { autoRecall } from './auto-recall.js';
import { turnHistory } from './rotations.js';
import { windowVersion } from '../versioned-cache.js';
import { WindowState } from './window/window-state.js';

interface TurnInput {
  content: string;
  key?: string;
  contentSha256: string;
  signal?: AbortSignal;
  extras?: TurnExtras;
}

/**
 * What one request adds to a turn and never stores (the OpenAI facade's clients): a system text
 * applied after the entity's instructions, sampling, tools, and the tool round the model is
 * answering (its calls and their results, after the user message). A reply that calls tools is
 * returned, not stored: the turn is stored when the model gives its final reply.
 */
export interface TurnExtras {
  system?: string;
  sampling?: Sampling;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  round?: ChatMessage[];
  /**
   * A client that stops a stream keeps what it was shown (the facade's chat clients), so the
   * entity keeps it too: once text has been streamed, this signal ends the reply where it is and
   * the turn is stored with it. Before any text it cancels, as `signal` does.
   */
  stop?: AbortSignal;
  /** The caller waits for the whole reply (`stream: false`): the provider may answer in one piece. */
  buffered?: boolean;
  /** The turn came through the OpenAI facade (it is counted as such). */
  facade?: boolean;
  /** The request's share of its key's tokens per minute: the turn reserves its message and its reply's bound before the model is called. */
  allowance?: TokenAllowance;
  /** The model is offered `remember`, which sets a pinned memory block (issue 33; remember.ts). */
  memoryTool?: boolean;
}

/** Which entity a turn is for: the account's, or a 404. */
export interface EntityRef {
  id: string;
  accountId: string;
  /**
   * An entity not stored yet (a branch): the turn's commit writes it together with the turn, so
   * a refused or failed turn leaves nothing. Once an entity with its id is stored (a retry that
   * finished first), the stored one is used.
   */
  create?: EntityImport;
}

/** The entity as the turn sees it, and the write that creates it when it is not stored yet. */
interface Current {
  entity: EntityRow;
  create?: EntityImport;
}

/**
 * One entity turn, as its steps: replay, lease, budget, rotate, generate, commit. Nothing is
 * written until the reply is complete; then one unit of work stores the user message, the
 * rotation, the reply, the charge, the idempotency record, and frees the lease. Any failure, an
 * aborted signal or a consumer that stops iterating leaves the entity as it was.
 */
export async function* runTurn(deps: EngineDeps, ref: EntityRef, input: TurnInput): AsyncGenerator<TurnEvent> {
  const { entity } = await current(deps, ref);
  const stored = await replayable(deps, entity.id, input);
  if (stored) return yield* replay(stored);
  const count = new MessageCount(input.content);
  await checkMessage(entity, count);
  yield* withLease(deps, turnLease(deps, entity.id, input), input.signal, (lease, signal) =>
    leasedTurn(deps, ref, input, count, lease, signal),
  );
}

/** The turn while this process holds the entity's lease; `signal` aborts on cancel or a lost lease. */
async function* leasedTurn(
  deps: EngineDeps,
  ref: EntityRef,
  input: TurnInput,
  count: MessageCount,
  lease: HeldLease,
  signal: AbortSignal,
): AsyncGenerator<TurnEvent> {
  try {
    // Re-read under the lease: another writer may have finished a turn (or this key) meanwhile.
    const now = await current(deps, ref);
    const stored = await replayable(deps, now.entity.id, input);
    if (stored) return yield* replay(stored);
    await checkBudget(deps, now.entity, count);
    const turn = await openTurn(deps, now, count, signal, input.extras);
    turn.extras.sampling = await reserveReply(turn.extras.allowance, count.bound, turn.extras.sampling);
    turn.recalled = await autoRecall(turn);
    const { prepared, reply } = yield* rotateAndGenerate(turn);
    if (signal.aborted || (stopped(turn) && !turn.started)) throw cancelled(callerSignal(input));
    if (reply.toolCalls.length) return yield* toolRound(turn, prepared, reply);
    const { completion, billed } = await commit(turn, prepared, reply, lease, input);
    if (!turn.started) yield* announce(turn, prepared);
    told(turn, prepared, completion);
    yield { type: 'done', completion, replayed: false, billed };
  } catch (err) {
    if (err instanceof ProviderError || err instanceof ContextOverflowError) deps.events.providerError(providerErrorClass(err));
    const lost = isAbortError(err) || signal.aborted || err instanceof ConflictError;
    // A lease that vanished with its entity: say so, not that the process stalled or another turn won.
    if (lost && !input.signal?.aborted && (await deletedMeanwhile(deps, ref))) throw deleted(ref.id);
    if (isAbortError(err) || signal.aborted) throw cancelled(callerSignal(input));
    throw err;
  }
}

/** Whether the entity (a stored one, not one this turn creates) is gone: deleted while the turn ran. */
async function deletedMeanwhile(deps: EngineDeps, ref: EntityRef): Promise<boolean> {
  if (ref.create) return false;
  return (await deps.store.entities.get(ref.accountId, ref.id).catch(() => true)) === undefined;
}

function deleted(id: string): NotFoundError {
  return new NotFoundError(`entity ${id} was deleted while this turn ran; nothing was stored`, {
    hint: 'list entities with: mgpt entities list',
  });
}

async function current(deps: EngineDeps, ref: EntityRef): Promise<Current> {
  const row = await deps.store.entities.get(ref.accountId, ref.id);
  if (row) return { entity: row };
  if (ref.create) return { entity: ref.create.entity, create: ref.create };
  throw new NotFoundError(`no entity ${ref.id} on this account`, { hint: 'list entities with: mgpt entities list' });
}

/** The stored reply for this idempotency key, if the key was used; a reused key with other content is refused. */
async function replayable(deps: EngineDeps, entityId: string, input: TurnInput): Promise<EntityCompletion | null> {
  if (input.key === undefined) return null;
  const row = await deps.store.idempotency.get(entityId, input.key);
  if (!row) return null;
  if (row.contentSha256 !== input.contentSha256) throw keyReused(input.key);
  return JSON.parse(row.completion) as EntityCompletion;
}

function* replay(c: EntityCompletion): Generator<TurnEvent> {
  yield { type: 'start', id: c.id, model: c.model, created: c.created, entityId: c.entity_id, replayed: true };
  const content = c.choices[0]?.message.content ?? '';
  if (content) yield { type: 'delta', text: content };
  yield { type: 'done', completion: c, replayed: true };
}

/** Before the lease: the entity takes messages, and this one fits its window budget. */
async function checkMessage(entity: EntityRow, count: MessageCount): Promise<void> {
  if (entity.transcriptTokens >= entity.capTokens) throw readOnly(entity);
  if (count.bound > entity.budgetTokens && (await count.exact()) > entity.budgetTokens) {
    throw new BadRequestError(
      `message is ${await count.exact()} tokens, larger than the window budget of ${entity.budgetTokens} tokens`,
      { hint: 'split it into smaller messages' },
    );
  }
}

function turnLease(deps: EngineDeps, entityId: string, input: TurnInput): LeaseRequest {
  return {
    subject: entitySubject(entityId),
    key: input.key,
    contentSha256: input.contentSha256,
    refused: (held) => {
      deps.events.leaseConflict();
      return leaseRefused(entityId, input, held);
    },
  };
}

/** Another turn holds the entity: the same key still being answered, a reused key, or another message. */
function leaseRefused(id: string, input: TurnInput, held: LeaseRow): Error {
  if (input.key !== undefined && held.idempotencyKey === input.key) {
    if (held.contentSha256 !== input.contentSha256) return keyReused(input.key);
    return new ConflictError(`the message with idempotency key ${JSON.stringify(input.key)} is still being answered`, {
      hint: 'retry with the same key after it finishes to get its reply',
    });
  }
  return new ConflictError(`entity ${id} is answering another message`, { hint: 'retry after that reply finishes' });
}

/** Under the lease: still writable, and a metered account (a balance, not null) covers the message at its exact count. */
async function checkBudget(deps: EngineDeps, entity: EntityRow, count: MessageCount): Promise<void> {
  if (entity.transcriptTokens >= entity.capTokens) throw readOnly(entity);
  const account = await deps.store.accounts.get(entity.accountId);
  // Counted exactly only for a metered account: the count may wait for the tokenizer.
  if (isMetered(account)) requireFunds(account, costUsd(deps.prices[entity.model], await count.exact(), 0), 'this message');
}

/** What the steps of one turn share. */
interface TurnState extends WindowTurn {
  /** The entity's own write, when this turn creates it (a branch). */
  create?: EntityImport;
  replyId: string;
  created: number;
  /** The caller has seen the start of the reply: from then on nothing is retried. */
  started: boolean;
  extras: TurnExtras;
  /** The rounds of recall this attempt took (an entity with recall on). */
  recall: RecallState;
  /** When the turn started (the clock's ms), for its log record. */
  t0: number;
  /** The reply so far, when a shared context cut it and it is being continued. */
  prefill?: Prefill;
  /** When the caller saw the turn start (the clock's ms), for the first-token metric. */
  firstTokenAt?: number;
  /** The prompt the last request sent, up to the user message (the turn's window record). */
  prompt?: ChatMessage[];
}

/** The entity as this turn's prompt sees it: the request's system text after its instructions (the row keeps its own). */
async function withSystem(entity: EntityRow, system: string): Promise<EntityRow> {
  const instructions = entity.instructions ? `${entity.instructions}\n\n${system}` : system;
  return { ...entity, instructions, instructionsTokens: (await loadTokenEstimator()).count(instructions) };
}

/**
 * A reply that calls tools: returned to the caller and not stored. The client runs the tools and
 * sends the results; the request that gets the final reply stores the turn. The provider was
 * called all the same, so the reply is billed and logged like a turn (the message and what the
 * model wrote, its calls and any recall rounds), in one transaction, and counted by the caller.
 */
async function* toolRound(turn: TurnState, prepared: PreparedWindow, reply: Reply): AsyncGenerator<TurnEvent> {
  if (!turn.started) yield* announce(turn, prepared, false);
  const tok = await loadTokenEstimator();
  const replyTokens = tok.count(reply.text) + tok.count(JSON.stringify(replyMessage(reply).tool_calls ?? []));
  const completion: EntityCompletion = {
    id: turn.replyId, object: 'chat.completion', created: turn.created, model: turn.entity.model,
    choices: [{ index: 0, message: replyMessage(reply), finish_reason: 'tool_calls' }],
    usage: usage(reply.usage?.inputTokens ?? prepared.estimate, reply.usage?.outputTokens ?? replyTokens, reply.usage?.cachedTokens),
    entity_id: turn.entity.id,
    ...(turn.recalled ? { recalled: turn.recalled.messages } : {}),
  };
  const billed = await chargeToolRound(turn, completion, replyTokens, reply.toolCalls.length);
  yield { type: 'done', completion, replayed: false, billed };
}

/** Bills and logs a tool round in one write: the message, and the reply's calls with the recall rounds before them. */
async function chargeToolRound(turn: TurnState, completion: EntityCompletion, replyTokens: number, toolCalls: number): Promise<number> {
  const { deps, entity } = turn;
  const inputTokens = await turn.count.exact();
  const outputTokens = replyTokens + turn.recall.callTokens;
  const cost = costUsd(deps.prices[entity.model], inputTokens, outputTokens);
  const u = completion.usage;
  const out = { model: turn.model.modelId, inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens, costUsd: cost, totalMs: deps.clock.now() - turn.t0, toolCalls, recalled: turn.recalled };
  const log = (await recallLog(deps, entity, turn.recall, out))!;
  const charge = { accountId: entity.accountId, entityId: entity.id, model: entity.model, inputTokens, outputTokens, costUsd: cost, createdAt: deps.clock.iso() };
  await deps.store.accounts.chargeWithLog(charge, log);
  return inputTokens + outputTokens;
}

async function openTurn(deps: EngineDeps, current: Current, count: MessageCount, signal: AbortSignal, extras: TurnExtras = {}): Promise<TurnState> {
  const { create } = current;
  const entity = extras.system ? await withSystem(current.entity, extras.system) : current.entity;
  const model = await deps.chatModel(entity.model);
  const window = create
    ? WindowState.of(create.blocks.slice())
    : deps.windows.get(entity.id, windowVersion(entity))?.value ?? WindowState.of(await deps.store.entities.window(entity.id));
  // The provider's stream and the rotation end on a cancel, a lost lease, or a stop.
  const generation = extras.stop ? AbortSignal.any([signal, extras.stop]) : signal;
  const t0 = deps.clock.now();
  const memory = await pinnedMemory(deps, entity.id);
  return {
    deps, entity, create, model, window, memory, content: count.content, count, signal: generation, extras,
    replyId: `chatcmpl-${deps.newId()}`, created: Math.floor(t0 / 1000), started: false, recall: emptyRecall(), t0,
  };
}

/**
 * Rotates (if needed) and streams the reply, announcing the turn with its first text. A prompt the
 * model refuses as too long teaches the route its limits, even mid-reply; the turn is then planned
 * again (see retriesFor) if nothing reached the caller yet.
 */
async function* rotateAndGenerate(turn: TurnState): AsyncGenerator<TurnEvent, { prepared: PreparedWindow; reply: Reply }> {
  let reply = emptyReply();
  // A streamed reply the shared context cut is continued on the prompt it had (see continuation()).
  let resume: PreparedWindow | undefined;
  for (let attempt = 0; ; attempt++) {
    let prepared = resume;
    if (!resume) [reply, turn.recall] = [emptyReply(), emptyRecall()];
    try {
      prepared ??= await rotate(turn, attempt === 0);
      for (;;) {
        // Inline rather than a generator of its own: every event would pay one more level of delegation.
        for await (let part of generate(turn, prepared)) {
          if (turn.signal.aborted) break;
          if (turn.prefill && part.type === 'text-delta') part = { type: 'text-delta', text: turn.prefill.take(part.text) };
          const text = absorb(reply, part);
          if (!text) continue;
          if (!turn.started) {
            turn.count.prefetch();
            yield* announce(turn, prepared);
          }
          yield { type: 'delta', text };
        }
        const calls = turn.signal.aborted ? undefined : engineCalls(turn, reply.toolCalls);
        if (!calls) return { prepared, reply: turn.prefill ? { ...reply, usage: undefined } : reply };
        await runEngineRound(turn, prepared.head.blocks, calls, prepared.fit.limit?.cap ?? turn.entity.budgetTokens);
        Object.assign(reply, emptyReply());
      }
    } catch (err) {
      // Stopped after text: the provider's stream ends with an abort; what was streamed is the reply.
      if (prepared && turn.started && stopped(turn)) return { prepared, reply };
      if (!(err instanceof ContextOverflowError)) throw err;
      // A refused summary request was learned from where it was made.
      if (prepared) await turn.deps.calibration.learn(turn.model.routeKey, err, prepared.estimate + turn.recall.tokens, prepared.fit.reserveTokens);
      resume = prepared && continuation(turn, err, reply, attempt) ? await bounded(turn, prepared) : undefined;
      if (!resume && (turn.started || attempt >= retriesFor(err))) throw tooLarge(err, turn);
      // The other requests that filled a shared context need a moment to finish.
      if (err.shared) await sleep(SHARED_BACKOFF_MS * (1 + attempt) * (0.5 + Math.random()), turn.signal);
    }
  }
}

/**
 * Whether a reply the caller is already reading, cut because a context shared with other requests
 * ran out, can go on where it stopped: the same prompt is sent again ending with the reply so far,
 * which llama-server (the one server that shares a context so) continues, sending that text again
 * first. Only a plain reply (no tool calls, no recall round) is continued, as often as a shared
 * overflow is retried.
 */
function continuation(turn: TurnState, err: ContextOverflowError, reply: Reply, attempt: number): boolean {
  if (!err.shared || !turn.started || attempt >= retriesFor(err) || reply.toolCalls.length || turn.recall.rounds) return false;
  turn.prefill = new Prefill(reply.text);
  return true;
}

/** The same prompt with the reply bound the route now has (what it just learned: the context is shared). */
async function bounded(turn: TurnState, prepared: PreparedWindow): Promise<PreparedWindow> {
  const fixed = fixedParts(turn);
  const fit = await turn.deps.calibration.fit(turn.model, fixed.tokens, fixed.messages);
  return { ...prepared, fit: { ...prepared.fit, replyCap: fit.replyCap } };
}

/** The reply so far, sent as the prompt's last (assistant) message; the server's echo of it is dropped. */
class Prefill {
  private pending: string;
  constructor(readonly text: string) {
    this.pending = text;
  }

  /** What of `delta` is new; a server that does not echo the text first did not continue it. */
  take(delta: string): string {
    if (!this.pending) return delta;
    const n = Math.min(this.pending.length, delta.length);
    if (delta.slice(0, n) !== this.pending.slice(0, n)) {
      throw new ProviderError('the shared context ran out mid-reply, and the server did not continue the reply from where it stopped', {
        hint: "give each slot its own context (llama-server -np N -c N*CTX) or lower --concurrency",
      });
    }
    this.pending = this.pending.slice(n);
    return delta.slice(n);
  }
}

/**
 * How often an overflow is planned again: once, as what the server said settles it; a context
 * shared with other requests may still run out while they run, so up to three times, each
 * learning a smaller share of it.
 */
function retriesFor(err: ContextOverflowError): number {
  return err.shared ? 3 : 1;
}

/** How long a turn waits before it tries a shared context again, times the attempt (with jitter). */
const SHARED_BACKOFF_MS = 300;

/**
 * Starts the provider's stream for the prepared window. An entity with recall on is offered the
 * recall tool beside the request's own; after a recall round the model answers freely (a forced
 * toolChoice applies to the first request only).
 */
function generate(turn: TurnState, prepared: PreparedWindow): AsyncIterable<StreamPart> {
  const { round = [], sampling, buffered } = turn.extras;
  const recalled = turn.recall.messages;
  const prefill: ChatMessage[] = turn.prefill ? [{ role: 'assistant', content: turn.prefill.text }] : [];
  turn.prompt = promptMessages(turn.entity.instructions, prepared, turn.recalled, turn.memory);
  const messages = [...turn.prompt, ...round, ...recalled, ...prefill];
  const own = engineTools(turn);
  const tools = own.length ? [...own, ...(turn.extras.tools ?? [])] : turn.extras.tools;
  // After recall rounds the model answers: freely, or without tools once it has taken all it may.
  const toolChoice = !recalled.length ? turn.extras.toolChoice : turn.recall.rounds >= RECALL_ROUNDS_MAX ? 'none' : undefined;
  const cap = prepared.fit.replyCap;
  const maxTokens = cap === undefined ? undefined : Math.min(sampling?.maxTokens ?? cap, cap);
  return turn.model.stream({ messages, sampling, tools, toolChoice, maxTokens, purpose: 'reply', buffered, signal: turn.signal });
}

/**
 * The turn's start, and its rotation if it had one: sent once, with the first output. `stores`
 * false: the reply is known to call tools, so nothing will be stored.
 */
function* announce(turn: TurnState, prepared: PreparedWindow, stores = true): Generator<TurnEvent> {
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
      covers: prepared.plan.covers,
      summaryTokens: prepared.summary.tokens,
      windowTokens: prepared.plan.remainingTokens + prepared.summary.tokens,
      ...(prepared.summaryUsage?.requests ? { summaryUsage: summaryUsage(prepared.summaryUsage) } : {}),
    };
  }
}

/**
 * Stores the user message, the rotation, the reply, the charge and the key in one unit of work
 * that frees the lease; a ConflictError (nothing stored) when another turn took the lease over.
 */
async function commit(turn: TurnState, prepared: PreparedWindow, reply: Reply, lease: HeldLease, input: TurnInput): Promise<{ completion: EntityCompletion; billed: number }> {
  const settled = await settle(turn, prepared, reply);
  const base = turnWrite(turn, prepared, settled, input);
  const write = { ...base, log: await turnLog(turn, settled, base.charge.costUsd), ...(await turnHistory(turn, prepared, settled.userBlock.coversFrom)) };
  // A created entity's history may be thousands of rows: the store writes those without holding the thread.
  await lease.write((claim) => turn.deps.store.entities.commitTurn({ ...write, lease: claim }), () => leaseTakenOver(turn.entity.id), true);
  // Only now, committed, do the two blocks join the kept window (in place: no copy of the window).
  turn.deps.windows.set(turn.entity.id, windowVersion(write.counters), prepared.head.append(settled.userBlock, settled.replyBlock));
  return { completion: settled.completion, billed: base.charge.inputTokens + base.charge.outputTokens };
}

/** The turn's log record, when its model used recall: the rounds, and what the final request cost. */
function turnLog(turn: TurnState, s: SettledTurn, costUsd: number): Promise<LogRow | undefined> {
  const u = s.completion.usage;
  const out = { model: turn.model.modelId, inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens, costUsd, totalMs: turn.deps.clock.now() - turn.t0, recalled: turn.recalled };
  return recallLog(turn.deps, turn.entity, turn.recall, out);
}

/** Tells the engine's observer what the committed turn did: its time, its rotation, its prompt tokens, what it recalled. */
function told(turn: TurnState, prepared: PreparedWindow, completion: EntityCompletion): void {
  const { events, clock } = turn.deps;
  const seconds = (at: number) => (at - turn.t0) / 1000;
  events.turn(turn.extras.facade ? 'facade' : 'entity', seconds(clock.now()), turn.firstTokenAt === undefined ? undefined : seconds(turn.firstTokenAt));
  if (prepared.summary) {
    events.rotation();
    events.summaryRequests(prepared.summaryUsage?.requests ?? 1);
  }
  events.promptTokens(completion.usage.prompt_tokens, completion.usage.prompt_tokens_details?.cached_tokens);
  if (turn.recalled) events.recalled(turn.recalled.messages.length, turn.recalled.tokens);
}

/** What a finished reply comes to: its counts, the completion the caller gets, and the window's two new blocks. */
interface SettledTurn {
  messageTokens: number;
  replyTokens: number;
  completion: EntityCompletion;
  userBlock: BlockRow;
  replyBlock: BlockRow;
}

async function settle(turn: TurnState, prepared: PreparedWindow, reply: Reply): Promise<SettledTurn> {
  const { deps, entity, model } = turn;
  const tok = await loadTokenEstimator();
  const messageTokens = await turn.count.exact();
  const userBlock: BlockRow = { ...prepared.userBlock, tokens: messageTokens };
  // The estimate is a sum: only the new message's count changed since the window was planned (and recall's rounds came after).
  const promptTokens = prepared.estimate - prepared.userBlock.tokens + messageTokens + turn.recall.tokens;
  if (reply.usage?.inputTokens) await deps.calibration.observe(model.routeKey, promptTokens, reply.usage.inputTokens);
  const replyTokens = tok.count(reply.text);
  const completion: EntityCompletion = {
    id: turn.replyId,
    object: 'chat.completion',
    created: turn.created,
    model: entity.model,
    choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: reply.finish }],
    usage: usage(reply.usage?.inputTokens ?? promptTokens, reply.usage?.outputTokens ?? replyTokens, reply.usage?.cachedTokens),
    entity_id: entity.id,
    ...(turn.recalled ? { recalled: turn.recalled.messages } : {}),
  };
  const at = userBlock.coversFrom + 1;
  const replyBlock: BlockRow = {
    id: deps.newId(), position: userBlock.position + 1, kind: 'message', role: 'assistant', content: reply.text, tokens: replyTokens, coversFrom: at, coversTo: at,
  };
  return { messageTokens, replyTokens, completion, userBlock, replyBlock };
}

/** The turn's unit of work, but for the lease it runs under. */
function turnWrite(turn: TurnState, prepared: PreparedWindow, s: SettledTurn, input: TurnInput): Omit<EntityTurnWrite, 'lease'> {
  const { deps, entity } = turn;
  const { clock } = deps;
  const { messageTokens, replyTokens } = s;
  const userSeq = s.userBlock.coversFrom;
  const userAt = clock.iso();
  const folds = prepared.plan && prepared.summary ? prepared.plan.take : 0;
  const reply = s.replyBlock.content;
  return {
    entityId: entity.id,
    create: turn.create && unfolded(turn.create, folds),
    messages: [
      { seq: userSeq, role: 'user', content: turn.content, tokens: messageTokens, createdAt: userAt },
      { seq: userSeq + 1, role: 'assistant', content: reply, tokens: replyTokens, createdAt: clock.iso() },
    ],
    deleteBlockIds: turn.create ? [] : turn.window.blocks.slice(0, folds).map((b) => b.id),
    insertBlocks: [...(prepared.summary ? [prepared.summary] : []), s.userBlock, s.replyBlock],
    counters: {
      transcriptMessages: userSeq + 1,
      transcriptTokens: entity.transcriptTokens + messageTokens + replyTokens,
      windowTokens: prepared.head.tokens + messageTokens + replyTokens,
      windowBlocks: prepared.head.blocks.length + 2,
      updatedAt: clock.iso(),
    },
    // Billed: the new message and the reply (with the calls of its recall rounds); never the window, history or rotation summaries.
    charge: {
      accountId: entity.accountId, entityId: entity.id, model: entity.model, inputTokens: messageTokens, outputTokens: replyTokens + turn.recall.callTokens,
      costUsd: costUsd(deps.prices[entity.model], messageTokens, replyTokens + turn.recall.callTokens), createdAt: clock.iso(),
    },
    ...(turn.recall.remembered.length ? { memory: turn.recall.remembered.map((r) => r.write) } : {}),
    idempotency:
      input.key === undefined
        ? undefined
        : { key: input.key, row: { contentSha256: input.contentSha256, completion: JSON.stringify(s.completion) }, createdAt: clock.iso() },
  };
}

/**
 * An entity this turn creates, without the blocks its own rotation folds (its window's first
 * `folds`, since the turn's window is the created one): they are never written.
 */
function unfolded(create: EntityImport, folds: number): EntityImport {
  return folds ? { ...create, blocks: create.blocks.slice(folds) } : create;
}

/** The provider's reason, in the seed's terms: a reply is complete (`stop`) unless it was cut. */
/** A refusal the retry could not cure: said plainly, with what to do. */
function tooLarge(err: unknown, turn: TurnState): unknown {
  if (!(err instanceof ContextOverflowError) || turn.started) return err;
  if (err.shared) return new ContextOverflowError(`the server's shared context ran out on every attempt: ${err.message}`, { shared: true, hint: err.hint });
  return new ContextOverflowError(`the prompt does not fit the model's context even after folding the window: ${err.message}`, {
    contextTokens: err.contextTokens,
    promptTokens: err.promptTokens,
    hint: err.hint ?? `set the context explicitly: mgpt config set models.${turn.entity.model}.contextSize N`,
  });
}

function leaseTakenOver(id: string): ConflictError {
  return new ConflictError(`entity ${id}: another turn took over the lease before this one could be stored`, {
    hint: 'retry; with an idempotency key the retry is safe',
  });
}

/** Whether the client stopped the stream (see TurnExtras.stop). */
function stopped(turn: TurnState): boolean {
  return turn.extras.stop?.aborted === true;
}

/** The caller's signal that ended the turn, if one did: a cancel, or a stop before any text. */
function callerSignal(input: TurnInput): AbortSignal | undefined {
  return input.extras?.stop?.aborted ? input.extras.stop : input.signal;
}

function cancelled(signal?: AbortSignal): CancelledError {
  return new CancelledError(
    signal?.aborted
      ? TURN_CANCELLED
      : 'the turn lost its lease (the process stalled longer than the lease TTL); nothing was stored',
  );
}

function keyReused(key: string): BadRequestError {
  return new BadRequestError(`idempotency key ${JSON.stringify(key)} was already used with different content`, {
    hint: 'use a new key for a new message',
  });
}

function readOnly(entity: EntityRow): ConflictError {
  return new ConflictError(
    `entity ${entity.id} is read-only: its transcript reached the cap of ${entity.capTokens} tokens`,
    { hint: 'export it (mgpt export) and start a new entity', code: 'read_only' },
  );
}

/** A summary's usage in the completion's terms, when the provider counted it. */
function summaryUsage(u: SummaryUsage): Usage {
  return usage(u.inputTokens, u.outputTokens, u.cachedTokens);
}

function usage(prompt: number, completion: number, cached?: number): Usage {
  const u: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached !== undefined) u.prompt_tokens_details = { cached_tokens: cached };
  return u;
}
