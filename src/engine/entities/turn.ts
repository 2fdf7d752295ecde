import type { EntityCompletion, TurnEvent } from '../../core/wire/entity-types.js';
import { BadRequestError, ConflictError, isAbortError } from '../../core/errors.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { EntityRow, LeaseRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { keyReused, storedAnswer } from '../generation/idempotency.js';
import { replayEvents } from '../generation/replay.js';
import { type HeldLease, type LeaseRequest, entitySubject, withLease } from '../support/lease.js';
import { isMetered, requireFunds } from '../platform/billing.js';
import { reserveReply } from '../platform/rate-limits.js';
import { windowVersion } from '../support/versioned-cache.js';
import { emptyRecall } from './recall.js';
import { pinnedMemory } from './memory.js';
import { commit, told, toolRound } from './turn-commit.js';
import { announce, rotateAndGenerate } from './turn-reply.js';
import {
  type Current,
  type EntityRef,
  type TurnExtras,
  type TurnInput,
  type TurnState,
  callerSignal,
  cancelled,
  deleted,
  entityNotFound,
  answering,
  readOnly,
  stopped,
} from './turn-state.js';
import { MessageCount } from './window/turn-window.js';
import { WindowState } from './window/window-state.js';
import { loadWindow } from './window/load-window.js';
import { checkWrittenOrder } from './written-at.js';

export type { EntityRef, TurnExtras } from './turn-state.js';

/**
 * One entity turn, as its steps: replay, lease, budget, rotate, generate, commit. Nothing is
 * written until the reply is complete; then one unit of work stores the user message, the
 * rotation, the reply, the charge, the idempotency record, and frees the lease. Any failure, an
 * aborted signal or a consumer that stops iterating leaves the entity as it was. The model call
 * itself is generation/model-call.ts's; see docs/model-call.md.
 */
export async function* runTurn(deps: EngineDeps, ref: EntityRef, input: TurnInput): AsyncGenerator<TurnEvent> {
  const { entity } = await current(deps, ref);
  const stored = await replayable(deps, entity.id, input);
  if (stored) return yield* replay(stored);
  const count = new MessageCount(input.content);
  await checkMessage(entity, count);
  yield* withLease(deps, turnLease(deps, entity, input), input.signal, (lease, signal) =>
    leasedTurn(deps, { ...ref, seen: entity }, input, count, lease, signal),
  );
}

/** The turn while this process holds the entity's lease; `signal` aborts on cancel or a lost lease. */
async function* leasedTurn(
  deps: EngineDeps,
  ref: SeenRef,
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
    const ownerUserId = await checkBudget(deps, now.entity, count);
    await checkWrittenOrder(deps, now.entity, input.writtenAt);
    const turn = await openTurn(deps, { ...now, ownerUserId }, count, signal, input.extras);
    turn.extras.sampling = await reserveReply(turn.extras.allowance, count.bound, turn.extras.sampling);
    const { prepared, reply } = yield* rotateAndGenerate(turn);
    if (signal.aborted || (stopped(turn) && !turn.started)) throw cancelled(callerSignal(input));
    if (reply.toolCalls.length) return yield* toolRound(turn, prepared, reply);
    const { completion, usage, billed, seq } = await commit(turn, prepared, reply, lease, input);
    // The new messages' vectors are made after the reply is out, in the background.
    deps.semantic.refresh(now.entity);
    if (!turn.started) yield* announce(turn, prepared);
    told(turn, prepared, usage);
    yield { type: 'done', completion, replayed: false, billed, seq };
  } catch (err) {
    const lost = isAbortError(err) || signal.aborted || err instanceof ConflictError;
    // A lease that vanished with its entity: say so, not that the process stalled or another turn won.
    if (lost && !input.signal?.aborted && (await deletedMeanwhile(deps, ref))) throw deleted(ref.seen);
    if (isAbortError(err) || signal.aborted) throw cancelled(callerSignal(input));
    throw err;
  }
}

/** Whether the entity (a stored one, not one this turn creates) is gone: deleted while the turn ran. */
async function deletedMeanwhile(deps: EngineDeps, ref: EntityRef): Promise<boolean> {
  if (ref.create) return false;
  return (await deps.store.entities.get(ref.accountId, ref.id).catch(() => true)) === undefined;
}

/** The entity a turn asks for, and the row it found before taking the lease (which names it in errors). */
type SeenRef = EntityRef & { seen: EntityRow };

/** The entity now; gone since the turn first read it, it was deleted meanwhile. */
async function current(deps: EngineDeps, ref: EntityRef | SeenRef): Promise<Current> {
  const row = await deps.store.entities.get(ref.accountId, ref.id);
  if (row) return { entity: row };
  if (ref.create) return { entity: ref.create.entity, create: ref.create };
  throw 'seen' in ref ? deleted(ref.seen) : entityNotFound(ref.id);
}

/** The stored reply for this idempotency key, if the key was used; a reused key with other content is refused. */
function replayable(deps: EngineDeps, entityId: string, input: TurnInput): Promise<EntityCompletion | undefined> {
  return storedAnswer<EntityCompletion>(deps.store, { kind: 'entity', entityId }, input.key, input.contentSha256);
}

function replay(c: EntityCompletion): Generator<TurnEvent> {
  const start = { type: 'start', id: c.id, model: c.model, created: c.created, entityId: c.entity_id, replayed: true } as const;
  return replayEvents(start, c, { type: 'done', completion: c, replayed: true });
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

function turnLease(deps: EngineDeps, entity: EntityRow, input: TurnInput): LeaseRequest {
  return {
    subject: entitySubject(entity.id),
    key: input.key,
    contentSha256: input.contentSha256,
    refused: (held) => {
      deps.events.leaseConflict();
      return leaseRefused(entity, input, held);
    },
  };
}

/** Another turn holds the entity: the same key still being answered, a reused key, or another message. */
function leaseRefused(entity: EntityRow, input: TurnInput, held: LeaseRow): Error {
  if (input.key !== undefined && held.idempotencyKey === input.key) {
    if (held.contentSha256 !== input.contentSha256) return keyReused({ kind: 'entity', entityId: entity.id }, input.key);
    return new ConflictError(`the message with idempotency key ${JSON.stringify(input.key)} is still being answered`, {
      hint: 'retry with the same key after it finishes to get its reply',
    });
  }
  return answering(entity, 'another message');
}

/**
 * Under the lease: still writable, and a metered account (a balance, not null) covers the message
 * at its exact count. Answers the account's user id, whose log record the turn writes.
 */
async function checkBudget(deps: EngineDeps, entity: EntityRow, count: MessageCount): Promise<string> {
  if (entity.transcriptTokens >= entity.capTokens) throw readOnly(entity);
  const account = await deps.store.accounts.get(entity.accountId);
  // Counted exactly only for a metered account: the count may wait for the tokenizer.
  if (isMetered(account)) requireFunds(account, costUsd(deps.prices[entity.model], await count.exact(), 0), 'this message');
  return account?.userId ?? entity.accountId;
}

async function openTurn(deps: EngineDeps, current: Current & { ownerUserId: string }, count: MessageCount, signal: AbortSignal, extras: TurnExtras = {}): Promise<TurnState> {
  const { create } = current;
  const entity = extras.system ? await withSystem(current.entity, extras.system) : current.entity;
  const model = await deps.chatModel(entity.model);
  const window = create
    ? WindowState.of(create.blocks.slice())
    : deps.windows.get(entity.id, windowVersion(entity))?.value ?? (await loadWindow(deps, entity));
  // The provider's stream and the rotation end on a cancel, a lost lease, or a stop.
  const generation = extras.stop ? AbortSignal.any([signal, extras.stop]) : signal;
  const t0 = deps.clock.now();
  const memory = await pinnedMemory(deps, entity.id);
  return {
    deps, entity, create, model, window, memory, content: count.content, count, signal: generation, extras,
    replyId: `chatcmpl-${deps.newId()}`, created: Math.floor(t0 / 1000), started: false, recall: emptyRecall(), t0, ownerUserId: current.ownerUserId,
  };
}

/** The entity as this turn's prompt sees it: the request's system text after its instructions (the row keeps its own). */
async function withSystem(entity: EntityRow, system: string): Promise<EntityRow> {
  const instructions = entity.instructions ? `${entity.instructions}\n\n${system}` : system;
  return { ...entity, instructions, instructionsTokens: (await loadTokenEstimator()).count(instructions) };
}
