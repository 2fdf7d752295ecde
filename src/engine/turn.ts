import type { EntityCompletion, TurnEvent } from '../core/entity-types.js';
import {
  BadRequestError,
  CancelledError,
  ConflictError,
  NotFoundError,
  PaymentRequiredError,
  isAbortError,
} from '../core/errors.js';
import { costUsd, roundUsd } from '../core/models.js';
import { type TokenEstimator, loadTokenEstimator, loadedTokenEstimator, tokenUpperBound } from '../core/tokens.js';
import { planRotation } from '../core/window-plan.js';
import type { ChatMessage, ChatModel } from '../providers/spec.js';
import type { AccountRow } from '../store/account-repo.js';
import type { BlockRow, EntityRow } from '../store/entity-repo.js';
import type { EngineDeps } from './deps.js';
import { windowVersion } from './versioned-cache.js';

interface TurnInput {
  content: string;
  key?: string;
  contentSha256: string;
  signal?: AbortSignal;
}

const SUMMARY_INSTRUCTIONS =
  'You maintain the long-term memory of a conversation. Summarize the conversation below so that ' +
  'the speaker can continue it: keep names, facts, decisions, open questions and the tone. If it ' +
  'starts with an earlier summary, fold that summary in. Write plain prose, no preamble.';

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

  const owner = deps.newId();
  const ttl = deps.limits.leaseTtlMs;
  const held = store.leases.acquire(
    { entityId: id, owner, idempotencyKey: input.key ?? null, contentSha256: input.contentSha256, expiresAt: clock.now() + ttl },
    clock.now(),
  );
  if (held) {
    if (input.key !== undefined && held.idempotencyKey === input.key) {
      if (held.contentSha256 !== input.contentSha256) throw keyReused(input.key);
      throw new ConflictError(`the message with idempotency key ${JSON.stringify(input.key)} is still being answered`, {
        hint: 'retry with the same key after it finishes to get its reply',
      });
    }
    throw new ConflictError(`entity ${id} is answering another message`, { hint: 'retry after that reply finishes' });
  }

  const abort = new AbortController();
  const onAbort = () => abort.abort();
  input.signal?.addEventListener('abort', onAbort, { once: true });
  if (input.signal?.aborted) abort.abort();
  const refresh = setInterval(() => {
    try {
      if (!store.leases.refresh(id, owner, clock.now() + ttl)) abort.abort();
    } catch {
      // The file is busy (another writer's commit): try again on the next tick; the TTL allows it.
    }
  }, Math.max(50, Math.floor(ttl / 3)));
  refresh.unref();
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
    // Rotation is monotonic in the new message's size: if the bound needs none, neither does the exact count.
    let plan = planRotation(blocks, exactTokens ?? tokenUpperBound(input.content), current.budgetTokens);
    if (plan && exactTokens === undefined) plan = planRotation(blocks, await exact(), current.budgetTokens);
    const now = clock.iso();
    const userSeq = current.transcriptMessages + 1;
    let kept = blocks;
    let summary: BlockRow | undefined;
    if (plan) {
      const span = blocks.slice(0, plan.take);
      kept = blocks.slice(plan.take);
      const text = await summarize(model, tok!, span, plan.maxSummaryTokens, abort.signal);
      summary = {
        id: deps.newId(),
        position: span[0].position,
        kind: 'summary',
        role: 'system',
        content: text,
        tokens: tok!.count(text),
        coversFrom: plan.covers[0],
        coversTo: plan.covers[1],
      };
      yield {
        type: 'rotation',
        covers: plan.covers,
        summaryTokens: summary.tokens,
        windowTokens: plan.remainingTokens + summary.tokens,
      };
    }
    const lastPosition = blocks.length ? blocks[blocks.length - 1].position : 0;
    const userBlock: BlockRow = {
      id: deps.newId(),
      position: lastPosition + 1,
      kind: 'message',
      role: 'user',
      content: input.content,
      // Made exact before anything is stored (below); the prompt itself needs only the text.
      tokens: exactTokens ?? -1,
      coversFrom: userSeq,
      coversTo: userSeq,
    };
    const window = [...(summary ? [summary] : []), ...kept, userBlock];

    const replyId = `chatcmpl-${deps.newId()}`;
    const created = Math.floor(clock.now() / 1000);
    // Announced with the first output, so a provider that fails before answering fails the request cleanly.
    const start: TurnEvent = { type: 'start', id: replyId, model: current.model, created, entityId: id, replayed: false };
    let started = false;
    let reply = '';
    let providerUsage: { inputTokens: number; outputTokens: number } | undefined;
    for await (const part of model.stream({ messages: promptMessages(current.instructions, window), purpose: 'reply', signal: abort.signal })) {
      if (abort.signal.aborted) break;
      if (part.type === 'text-delta') {
        if (!started) {
          started = true;
          yield start;
        }
        reply += part.text;
        yield { type: 'delta', text: part.text };
      } else if (part.type === 'usage') {
        providerUsage = part.usage;
      } else if (part.type === 'error') {
        throw part.error;
      }
    }
    if (abort.signal.aborted) throw cancelled(input.signal);

    const messageTokens = await exact();
    userBlock.tokens = messageTokens;
    const promptEstimate = current.instructionsTokens + window.reduce((t, b) => t + b.tokens, 0);
    const replyTokens = tok!.count(reply);
    const completion: EntityCompletion = {
      id: replyId,
      object: 'chat.completion',
      created,
      model: current.model,
      choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
      usage: usage(providerUsage?.inputTokens ?? promptEstimate, providerUsage?.outputTokens ?? replyTokens),
      entity_id: id,
    };
    const replyBlock: BlockRow = {
      id: deps.newId(),
      position: lastPosition + 2,
      kind: 'message',
      role: 'assistant',
      content: reply,
      tokens: replyTokens,
      coversFrom: userSeq + 1,
      coversTo: userSeq + 1,
    };

    const finalWindow = [...window, replyBlock];
    const counters = {
      transcriptMessages: userSeq + 1,
      transcriptTokens: current.transcriptTokens + messageTokens + replyTokens,
      windowTokens: finalWindow.reduce((t, b) => t + b.tokens, 0),
      windowBlocks: finalWindow.length,
      updatedAt: clock.iso(),
    };
    store.transaction(() => {
      if (!store.leases.isHeld(id, owner, clock.now())) {
        throw new ConflictError(`entity ${id}: the turn's lease expired before it could be stored`, {
          hint: 'retry; with an idempotency key the retry is safe',
        });
      }
      const repo = store.entities;
      repo.insertMessage(id, { seq: userSeq, role: 'user', content: input.content, tokens: messageTokens, createdAt: now });
      repo.insertMessage(id, { seq: userSeq + 1, role: 'assistant', content: reply, tokens: replyTokens, createdAt: clock.iso() });
      if (plan && summary) {
        repo.deleteBlocks(blocks.slice(0, plan.take).map((b) => b.id));
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
      if (input.key !== undefined) {
        store.idempotency.insert(id, input.key, { contentSha256: input.contentSha256, completion: JSON.stringify(completion) }, clock.iso());
      }
      store.leases.release(id, owner);
    });
    committed = true;
    deps.windows.set(id, windowVersion(counters), finalWindow);
    if (!started) yield start;
    yield { type: 'done', completion, replayed: false };
  } catch (err) {
    if (isAbortError(err) || abort.signal.aborted) throw cancelled(input.signal);
    throw err;
  } finally {
    clearInterval(refresh);
    input.signal?.removeEventListener('abort', onAbort);
    if (!committed) {
      // Cancels a provider call still in flight (a consumer that stopped reading, an error).
      abort.abort();
      try {
        store.leases.release(id, owner);
      } catch {
        // The database is gone (process exit); the lease expires on its own.
      }
    }
  }
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

async function summarize(
  model: ChatModel,
  tok: TokenEstimator,
  span: readonly BlockRow[],
  maxTokens: number,
  signal: AbortSignal,
): Promise<string> {
  if (maxTokens <= 0) return '';
  const transcript = span
    .map((b) => (b.kind === 'summary' ? `Earlier summary: ${b.content}` : `${b.role}: ${b.content}`))
    .join('\n');
  let text = '';
  for await (const part of model.stream({
    messages: [
      { role: 'system', content: SUMMARY_INSTRUCTIONS },
      { role: 'user', content: transcript },
    ],
    maxTokens,
    purpose: 'summary',
    signal,
  })) {
    if (part.type === 'text-delta') text += part.text;
    else if (part.type === 'error') throw part.error;
  }
  text = text.trim();
  return tok.count(text) > maxTokens ? tok.truncate(text, maxTokens) : text;
}

/** A metered account (a balance, not null) must cover the new message. */
function checkBalance(deps: EngineDeps, entity: EntityRow, account: AccountRow, messageTokens: number): void {
  const balance = account.balanceUsd ?? 0;
  const billed = costUsd(deps.prices[entity.model], messageTokens, 0);
  if (balance > 0 && balance >= billed) return;
  throw new PaymentRequiredError(
    `insufficient balance: $${balance.toFixed(6)} left, this message costs $${billed.toFixed(6)}`,
    { balanceUsd: balance, billedUsd: billed, missingUsd: roundUsd(Math.max(billed - balance, 0)) },
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
      ? 'cancelled: nothing of this turn was stored'
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
