import type { EntityCompletion, FinishReason, TurnEvent } from '../core/entity-types.js';
import {
  BadRequestError,
  CancelledError,
  TURN_CANCELLED,
  ConflictError,
  ContextOverflowError,
  NotFoundError,
  PaymentRequiredError,
  isAbortError,
} from '../core/errors.js';
import { costUsd, roundUsd } from '../core/models.js';
import { loadTokenEstimator, loadedTokenEstimator, tokenUpperBound } from '../core/tokens.js';
import { type RotationPlan, modelCost, planRotation, windowTokens } from '../core/window-plan.js';
import type { ChatMessage, ChatModel, ProviderUsage } from '../providers/spec.js';
import type { AccountRow } from '../store/types.js';
import type { BlockRow, EntityRow } from '../store/types.js';
import type { LeaseRow } from '../store/types.js';
import { PER_MESSAGE_TOKENS, type RouteFit, promptEstimate } from './calibration.js';
import type { EngineDeps } from './deps.js';
import { type HeldLease, entitySubject, takeLease } from './lease.js';
import { summarizeSpan } from './summarize.js';
import { windowVersion } from './versioned-cache.js';

interface TurnInput {
  content: string;
  key?: string;
  contentSha256: string;
  signal?: AbortSignal;
}

/**
 * One entity turn. Nothing is written until the reply is complete; then one transaction stores
 * the user message, the rotation, the reply, the charge, the idempotency record, and frees the
 * lease. Any failure, an aborted signal or a consumer that stops iterating leaves the entity as it was.
 */
export async function* runTurn(deps: EngineDeps, entity: EntityRow, input: TurnInput): AsyncGenerator<TurnEvent> {
  const { store, clock } = deps;
  const id = entity.id;
  if (input.key !== undefined) {
    const stored = replayable(deps, id, input.key, input.contentSha256);
    if (stored) {
      yield* replay(stored);
      return;
    }
  }
  if (entity.transcriptTokens >= entity.capTokens) throw readOnly(entity);
  // The tokenizer's tables take ~0.3 s to load. The first turn of a process does not wait for
  // them unless it must: a byte count bounds the token count from above, which settles the budget
  // check and rotation planning in the common case, so the provider call starts at once and the
  // exact count is taken after the reply.
  const loading = loadTokenEstimator();
  let tok = loadedTokenEstimator();
  let exactTokens = tok?.count(input.content);
  const exact = async (): Promise<number> => {
    tok ??= await loading;
    exactTokens ??= tok.count(input.content);
    return exactTokens;
  };
  if ((exactTokens ?? tokenUpperBound(input.content)) > entity.budgetTokens && (await exact()) > entity.budgetTokens) {
    throw new BadRequestError(
      `message is ${exactTokens} tokens, larger than the window budget of ${entity.budgetTokens} tokens`,
      { hint: 'split it into smaller messages' },
    );
  }

  const lease = takeLease(deps, entitySubject(id), { key: input.key, contentSha256: input.contentSha256 }, (held) =>
    leaseRefused(id, input, held),
  );
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  input.signal?.addEventListener('abort', onAbort, { once: true });
  lease.lost.addEventListener('abort', onAbort, { once: true });
  if (input.signal?.aborted) abort.abort();
  let committed = false;
  try {
    // Re-read under the lease: another writer may have finished a turn (or this key) meanwhile.
    const current = store.entities.get(entity.accountId, id);
    if (!current) throw new NotFoundError(`no entity ${id} on this account`);
    if (input.key !== undefined) {
      const stored = replayable(deps, id, input.key, input.contentSha256);
      if (stored) {
        yield* replay(stored);
        return;
      }
    }
    if (current.transcriptTokens >= current.capTokens) throw readOnly(current);
    // A metered account is charged by the exact count, so it is checked with it.
    const account = store.accounts.get(current.accountId);
    if (account && account.balanceUsd !== null) checkBalance(deps, current, account, await exact());

    const model = await deps.chatModel(current.model);
    const blocks = deps.windows.get(id, windowVersion(current))?.value ?? store.entities.window(id);
    const turn: TurnState = {
      deps, entity: current, model, blocks, content: input.content, tokens: () => exactTokens ?? tokenUpperBound(input.content), exact,
      signal: abort.signal, replyId: `chatcmpl-${deps.newId()}`, created: Math.floor(clock.now() / 1000), started: false,
    };
    // A prompt the model refuses as too long teaches the route its limits; the turn is then
    // planned again, once, before anything reached the caller.
    let generated: Generated;
    for (let attempt = 0; ; attempt++) {
      turn.prepared = undefined;
      try {
        turn.prepared = await prepareWindow(turn);
        generated = yield* generateReply(turn);
        break;
      } catch (err) {
        if (!(err instanceof ContextOverflowError) || turn.started || attempt > 0) throw tooLarge(err, turn);
        // A refused summary request was learned from where it was made.
        if (turn.prepared) deps.calibration.learn(model.routeKey, err, turn.prepared.estimate, turn.prepared.fit.reserveTokens);
      }
    }
    if (abort.signal.aborted) throw cancelled(input.signal);

    const completion = await commitTurn(turn, generated, { lease, key: input.key, contentSha256: input.contentSha256 });
    committed = true;
    if (!turn.started) yield* announce(turn);
    yield { type: 'done', completion, replayed: false };
  } catch (err) {
    if (isAbortError(err) || abort.signal.aborted) throw cancelled(input.signal);
    throw err;
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
    if (committed) lease.stop();
    else {
      // Cancels a provider call still in flight (a consumer that stopped reading, an error).
      abort.abort();
      lease.release();
    }
  }
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

type EntityCounters = Pick<EntityRow, 'transcriptMessages' | 'transcriptTokens' | 'windowTokens' | 'windowBlocks' | 'updatedAt'>;

/** What the steps of one turn share. */
interface TurnState {
  deps: EngineDeps;
  entity: EntityRow;
  model: ChatModel;
  /** The window before this turn. */
  blocks: readonly BlockRow[];
  content: string;
  /** The new message's token count: exact when known, else a bound from above. */
  tokens(): number;
  exact(): Promise<number>;
  signal: AbortSignal;
  replyId: string;
  created: number;
  /** The caller has seen the start of the reply: from then on nothing is retried. */
  started: boolean;
  prepared?: PreparedWindow;
}

interface PreparedWindow {
  fit: RouteFit;
  plan: RotationPlan | null;
  summary?: BlockRow;
  userBlock: BlockRow;
  /** The window the reply is generated from: summary?, kept blocks, the new message. */
  window: BlockRow[];
  /** The prompt's estimate, as the calibration compares it with the provider's count. */
  estimate: number;
}

interface Generated {
  reply: string;
  finish: FinishReason;
  usage?: ProviderUsage;
}

/** Plans the window for the route's limits, rotating (with a summary) when the budget or the model needs it. */
async function prepareWindow(turn: TurnState): Promise<PreparedWindow> {
  const { deps, entity, model, blocks } = turn;
  const fixedMessages = entity.instructions ? 1 : 0;
  const fit = deps.calibration.fit(model, entity.instructionsTokens, fixedMessages);
  // Rotation is monotonic in the new message's size: if the bound needs none, neither does the exact count.
  let plan = planRotation(blocks, turn.tokens(), entity.budgetTokens, fit.limit);
  if (plan) plan = planRotation(blocks, await turn.exact(), entity.budgetTokens, fit.limit);
  let kept = blocks;
  let summary: BlockRow | undefined;
  if (plan) {
    const tok = await loadTokenEstimator();
    const span = blocks.slice(0, plan.take);
    kept = blocks.slice(plan.take);
    const text = await summarizeSpan(model, tok, span, plan.maxSummaryTokens, fit, deps.calibration, turn.signal);
    summary = {
      id: deps.newId(),
      position: span[0].position,
      kind: 'summary',
      role: 'system',
      content: text,
      tokens: tok.count(text),
      coversFrom: plan.covers[0],
      coversTo: plan.covers[1],
    };
  }
  const lastPosition = blocks.length ? blocks[blocks.length - 1].position : 0;
  const userBlock: BlockRow = {
    id: deps.newId(),
    position: lastPosition + 1,
    kind: 'message',
    role: 'user',
    content: turn.content,
    // Made exact before anything is stored; the prompt itself needs only the text.
    tokens: turn.tokens(),
    coversFrom: entity.transcriptMessages + 1,
    coversTo: entity.transcriptMessages + 1,
  };
  const window = [...(summary ? [summary] : []), ...kept, userBlock];
  if (fit.limit && modelCost(window, fit.limit.perBlock) > fit.limit.cap) {
    userBlock.tokens = await turn.exact();
    if (modelCost(window, fit.limit.perBlock) > fit.limit.cap) throw doesNotFit(turn, fit, userBlock.tokens);
  }
  const fixed = entity.instructions ? [entity.instructionsTokens] : [];
  return { fit, plan, summary, userBlock, window, estimate: promptEstimate([...fixed, ...window.map((b) => b.tokens)]) };
}

/** Streams the reply, announcing the turn with its first text. */
async function* generateReply(turn: TurnState): AsyncGenerator<TurnEvent, Generated> {
  const { entity, model, prepared } = turn;
  const out: Generated = { reply: '', finish: 'stop' };
  const messages = promptMessages(entity.instructions, prepared!.window);
  for await (const part of model.stream({ messages, purpose: 'reply', signal: turn.signal })) {
    if (turn.signal.aborted) break;
    if (part.type === 'text-delta') {
      if (!turn.started) yield* announce(turn);
      out.reply += part.text;
      yield { type: 'delta', text: part.text };
    } else if (part.type === 'usage') {
      out.usage = part.usage;
    } else if (part.type === 'finish') {
      out.finish = finishReason(part.reason);
    } else if (part.type === 'error') {
      throw part.error;
    }
  }
  return out;
}

/** The turn's start, and its rotation if it had one: sent once, with the first output. */
function* announce(turn: TurnState): Generator<TurnEvent> {
  turn.started = true;
  const { entity, prepared } = turn;
  yield { type: 'start', id: turn.replyId, model: entity.model, created: turn.created, entityId: entity.id, replayed: false };
  if (prepared?.plan && prepared.summary) {
    yield {
      type: 'rotation',
      covers: prepared.plan.covers,
      summaryTokens: prepared.summary.tokens,
      windowTokens: prepared.plan.remainingTokens + prepared.summary.tokens,
    };
  }
}

/** Stores the user message, the rotation, the reply, the charge and the key in one transaction, freeing the lease. */
async function commitTurn(
  turn: TurnState,
  g: Generated,
  lease: { lease: HeldLease; key?: string; contentSha256: string },
): Promise<EntityCompletion> {
  const { deps, entity: current, model } = turn;
  const { store, clock } = deps;
  const { plan, summary, userBlock, window } = turn.prepared!;
  const id = current.id;
  const tok = await loadTokenEstimator();
  const messageTokens = await turn.exact();
  userBlock.tokens = messageTokens;
  const fixed = current.instructions ? [current.instructionsTokens] : [];
  const promptTokens = promptEstimate([...fixed, ...window.map((b) => b.tokens)]);
  if (g.usage?.inputTokens) deps.calibration.observe(model.routeKey, promptTokens, g.usage.inputTokens);
  const replyTokens = tok.count(g.reply);
  const completion: EntityCompletion = {
    id: turn.replyId,
    object: 'chat.completion',
    created: turn.created,
    model: current.model,
    choices: [{ index: 0, message: { role: 'assistant', content: g.reply }, finish_reason: g.finish }],
    usage: usage(g.usage?.inputTokens ?? promptTokens, g.usage?.outputTokens ?? replyTokens),
    entity_id: id,
  };
  const userSeq = userBlock.coversFrom;
  const replyBlock: BlockRow = {
    id: deps.newId(),
    position: userBlock.position + 1,
    kind: 'message',
    role: 'assistant',
    content: g.reply,
    tokens: replyTokens,
    coversFrom: userSeq + 1,
    coversTo: userSeq + 1,
  };
  const finalWindow = [...window, replyBlock];
  const counters: EntityCounters = {
    transcriptMessages: userSeq + 1,
    transcriptTokens: current.transcriptTokens + messageTokens + replyTokens,
    windowTokens: windowTokens(finalWindow),
    windowBlocks: finalWindow.length,
    updatedAt: clock.iso(),
  };
  const userAt = clock.iso();
  store.transaction(() => {
    lease.lease.assertOwned(
      () =>
        new ConflictError(`entity ${id}: another turn took over the lease before this one could be stored`, {
          hint: 'retry; with an idempotency key the retry is safe',
        }),
    );
    const repo = store.entities;
    repo.insertMessage(id, { seq: userSeq, role: 'user', content: turn.content, tokens: messageTokens, createdAt: userAt });
    repo.insertMessage(id, { seq: userSeq + 1, role: 'assistant', content: g.reply, tokens: replyTokens, createdAt: clock.iso() });
    if (plan && summary) {
      repo.deleteBlocks(turn.blocks.slice(0, plan.take).map((b) => b.id));
      repo.insertBlock(id, summary);
    }
    repo.insertBlock(id, userBlock);
    repo.insertBlock(id, replyBlock);
    repo.updateCounters(id, counters);
    // Billed: the new message and the reply; never the window, history or rotation summaries.
    store.accounts.charge({
      accountId: current.accountId,
      entityId: id,
      model: current.model,
      inputTokens: messageTokens,
      outputTokens: replyTokens,
      costUsd: costUsd(deps.prices[current.model], messageTokens, replyTokens),
      createdAt: clock.iso(),
    });
    if (lease.key !== undefined) {
      store.idempotency.insert(id, lease.key, { contentSha256: lease.contentSha256, completion: JSON.stringify(completion) }, clock.iso());
    }
    store.leases.release(lease.lease.subject, lease.lease.owner);
  });
  deps.windows.set(id, windowVersion(counters), finalWindow);
  return completion;
}

/** The provider's reason, in the seed's terms: a reply is complete (`stop`) unless it was cut. */
function finishReason(reason: string): FinishReason {
  return reason === 'length' || reason === 'content_filter' ? reason : 'stop';
}

/** The message (with the instructions) cannot fit the model however much is folded. */
function doesNotFit(turn: TurnState, fit: RouteFit, messageTokens: number): ContextOverflowError {
  const room = Math.max(0, (fit.limit?.cap ?? 0) - PER_MESSAGE_TOKENS);
  return new ContextOverflowError(
    `message is about ${messageTokens} tokens, but the model's context (${fit.contextTokens} tokens, ` +
      `${fit.reserveTokens} kept for the reply) leaves room for about ${room} after the instructions`,
    {
      contextTokens: fit.contextTokens,
      hint: turn.entity.instructionsTokens > room
        ? `shorten the instructions: mgpt entities update ${turn.entity.id} --instructions ...`
        : 'split the message into smaller ones, or route the entity model to a model with a larger context',
    },
  );
}

/** A refusal the retry could not cure: said plainly, with what to do. */
function tooLarge(err: unknown, turn: TurnState): unknown {
  if (!(err instanceof ContextOverflowError) || turn.started) return err;
  return new ContextOverflowError(`the prompt does not fit the model's context even after folding the window: ${err.message}`, {
    contextTokens: err.contextTokens,
    promptTokens: err.promptTokens,
    hint: err.hint ?? `set the context explicitly: mgpt config set models.${turn.entity.model}.contextSize N`,
  });
}

/** Instructions first (never rotated, not a block), then the window blocks in order. */
export function promptMessages(instructions: string, window: readonly BlockRow[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  for (const b of window) {
    if (b.kind === 'summary') messages.push({ role: 'system', content: b.content });
    else if (b.role === 'user') messages.push({ role: 'user', content: b.content });
    else messages.push({ role: 'assistant', content: b.content });
  }
  return messages;
}

/** A metered account (a balance, not null) must cover the new message. */
function checkBalance(deps: EngineDeps, entity: EntityRow, account: AccountRow, messageTokens: number): void {
  const balance = account.balanceUsd ?? 0;
  const billed = costUsd(deps.prices[entity.model], messageTokens, 0);
  if (balance > 0 && balance >= billed) return;
  const missing = roundUsd(Math.max(billed - balance, 0));
  throw new PaymentRequiredError(
    `insufficient balance: $${balance.toFixed(6)} left, this message costs $${billed.toFixed(6)}, $${missing.toFixed(6)} missing`,
    { balanceUsd: balance, billedUsd: billed, missingUsd: missing },
    { hint: `add funds: mgpt accounts topup ${account.name} 5` },
  );
}

function replayable(deps: EngineDeps, entityId: string, key: string, contentSha256: string): EntityCompletion | null {
  const row = deps.store.idempotency.get(entityId, key);
  if (!row) return null;
  if (row.contentSha256 !== contentSha256) throw keyReused(key);
  return JSON.parse(row.completion) as EntityCompletion;
}

function* replay(c: EntityCompletion): Generator<TurnEvent> {
  yield { type: 'start', id: c.id, model: c.model, created: c.created, entityId: c.entity_id, replayed: true };
  const content = c.choices[0]?.message.content ?? '';
  if (content) yield { type: 'delta', text: content };
  yield { type: 'done', completion: c, replayed: true };
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
    { hint: 'export it (mgpt export) and start a new entity' },
  );
}

function usage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
