import type { EntityCompletion, TurnEvent } from '../../core/wire/entity-types.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ProviderUsage } from '../../providers/spec.js';
import type { BlockRow, EntityImport, EntityTurnWrite } from '../../store/types.js';
import { type CompletionHead, settledUsage } from '../generation/completion.js';
import { reportCompleted } from '../generation/model-call.js';
import { type Reply, replyMessage } from '../generation/reply.js';
import type { HeldLease } from '../support/lease.js';
import { windowVersion } from '../support/versioned-cache.js';
import { toCompletion } from './entity-wire.js';
import { storeRemembered } from './remember.js';
import { turnHistory } from './rotations.js';
import { turnLog } from './turn-log.js';
import { announce } from './turn-reply.js';
import { type TurnInput, type TurnState, leaseTakenOver } from './turn-state.js';
import type { PreparedWindow } from './window/turn-window.js';

/**
 * Stores the user message, the rotation, the reply, the charge and the key in one unit of work
 * that frees the lease; a ConflictError (nothing stored) when another turn took the lease over.
 */
export async function commit(turn: TurnState, prepared: PreparedWindow, reply: Reply, lease: HeldLease, input: TurnInput): Promise<{ completion: EntityCompletion; usage: ProviderUsage; billed: number; seq: number }> {
  const settled = await settle(turn, prepared, reply);
  const base = turnWrite(turn, prepared, settled, input);
  const u = settled.usage;
  const log = turnLog(turn, { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cachedTokens: u.cachedTokens, costUsd: base.charge.costUsd });
  const write = { ...base, log, ...(await turnHistory(turn, prepared, settled.userBlock.coversFrom)) };
  // A created entity's history may be thousands of rows: the store writes those without holding the thread.
  await lease.write((claim) => turn.deps.store.entities.commitTurn({ ...write, lease: claim }), () => leaseTakenOver(turn.entity), true);
  // Only now, committed, do the two blocks join the kept window (in place: no copy of the window).
  turn.deps.windows.set(turn.entity.id, windowVersion(write.counters), prepared.head.append([settled.userBlock, settled.replyBlock], prepared.recall));
  const seq = settled.replyBlock.coversFrom;
  return { completion: settled.completion, usage: settled.usage, billed: base.charge.inputTokens + base.charge.outputTokens, seq };
}

/** Tells the engine's observer what the committed turn did: its time, its rotation, its prompt tokens, what it recalled. */
export function told(turn: TurnState, prepared: PreparedWindow, u: ProviderUsage): void {
  const { events } = turn.deps;
  reportCompleted(turn.deps, {
    kind: turn.extras.facade ? 'facade' : 'entity', t0: turn.t0, firstTokenAt: turn.firstTokenAt,
    promptTokens: u.inputTokens, cachedTokens: u.cachedTokens,
  });
  if (prepared.summary) {
    events.rotation();
    events.summaryRequests(prepared.summaryUsage?.requests ?? 1);
  }
  if (turn.recalled) events.recalled(turn.recalled.messages.length, turn.recalled.tokens);
}

/** What a finished reply comes to: its counts, the completion the caller gets, and the window's two new blocks. */
interface SettledTurn {
  /** What the reply is counted as (the provider's counts, else the estimates). */
  usage: ProviderUsage;
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
  const usage = settledUsage(reply.usage, { input: promptTokens, output: replyTokens });
  const completion = toCompletion({ head: head(turn), entityId: entity.id, reply, usage, recalled: turn.recalled });
  const at = userBlock.coversFrom + 1;
  const replyBlock: BlockRow = {
    id: deps.newId(), position: userBlock.position + 1, kind: 'message', role: 'assistant', content: reply.text, tokens: replyTokens, coversFrom: at, coversTo: at,
  };
  return { usage, messageTokens, replyTokens, completion, userBlock, replyBlock };
}

/** The turn's unit of work, but for the lease it runs under. */
function turnWrite(turn: TurnState, prepared: PreparedWindow, s: SettledTurn, input: TurnInput): Omit<EntityTurnWrite, 'lease'> {
  const { deps, entity } = turn;
  const { clock } = deps;
  const { messageTokens, replyTokens } = s;
  const userSeq = s.userBlock.coversFrom;
  // A dated message and its reply are one exchange of that time (written-at.ts); else both are now.
  const userAt = input.writtenAt ?? clock.iso();
  const folds = prepared.plan && prepared.summary ? prepared.plan.take : 0;
  const reply = s.replyBlock.content;
  return {
    entityId: entity.id,
    create: turn.create && unfolded(turn.create, folds),
    messages: [
      { seq: userSeq, role: 'user', content: turn.content, tokens: messageTokens, createdAt: userAt },
      { seq: userSeq + 1, role: 'assistant', content: reply, tokens: replyTokens, createdAt: input.writtenAt ?? clock.iso() },
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
      accountId: entity.accountId, entityId: entity.id, keyId: turn.extras.keyId ?? null, model: entity.model, inputTokens: messageTokens, outputTokens: replyTokens + turn.recall.callTokens,
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

/**
 * A reply that calls tools: returned to the caller and not stored. The client runs the tools and
 * sends the results; the request that gets the final reply stores the turn. The provider was
 * called all the same, so the reply is billed and logged like a turn (the message and what the
 * model wrote, its calls and any recall rounds), in one transaction, and counted by the caller.
 * Only the memory the model was told it remembered in earlier rounds is set (before the charge).
 */
export async function* toolRound(turn: TurnState, prepared: PreparedWindow, reply: Reply): AsyncGenerator<TurnEvent> {
  if (!turn.started) yield* announce(turn, prepared, false);
  const tok = await loadTokenEstimator();
  const replyTokens = tok.count(reply.text) + tok.count(JSON.stringify(replyMessage(reply).tool_calls ?? []));
  const usage = settledUsage(reply.usage, { input: prepared.estimate, output: replyTokens });
  const completion = toCompletion({ head: head(turn), entityId: turn.entity.id, reply, usage, finish: 'tool_calls', recalled: turn.recalled });
  // What the model was told it remembered is stored (remember.ts), then the round is billed.
  await storeRemembered(turn);
  const billed = await chargeToolRound(turn, usage, replyTokens, reply.toolCalls.length);
  yield { type: 'done', completion, replayed: false, billed };
}

/** Bills and logs a tool round in one write: the message, and the reply's calls with the recall rounds before them. */
async function chargeToolRound(turn: TurnState, u: ProviderUsage, replyTokens: number, toolCalls: number): Promise<number> {
  const { deps, entity } = turn;
  const inputTokens = await turn.count.exact();
  const outputTokens = replyTokens + turn.recall.callTokens;
  const cost = costUsd(deps.prices[entity.model], inputTokens, outputTokens);
  const log = turnLog(turn, { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cachedTokens: u.cachedTokens, costUsd: cost, toolCalls });
  const charge = { accountId: entity.accountId, entityId: entity.id, keyId: turn.extras.keyId ?? null, model: entity.model, inputTokens, outputTokens, costUsd: cost, createdAt: deps.clock.iso() };
  await deps.store.accounts.chargeWithLog(charge, log);
  return inputTokens + outputTokens;
}

/** What names the turn's completion: its id, its creation second, the entity's model. */
function head(turn: TurnState): CompletionHead {
  return { id: turn.replyId, created: turn.created, model: turn.entity.model };
}
