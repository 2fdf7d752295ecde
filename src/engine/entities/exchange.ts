import { BadRequestError } from '../../core/errors.js';
import { type ExchangeInput, type ExchangeResult, RECALL_MAX_TOKENS_DEFAULT, RECALL_MAX_TOKENS_MAX, type RecallInput, type RecallResult } from '../../core/wire/exchange.js';
import { SEARCH_QUERY_MAX_CHARS } from '../../core/text/search-query.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { BlockRow, EntityRow, EntityTurnWrite, MessageRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { entitySubject, takeLease } from '../support/lease.js';
import { toMessage } from './entity-wire.js';
import { retrieve } from './retrieve.js';
import { answering, leaseTakenOver, readOnly } from './turn-state.js';

/**
 * Records one exchange without a model call (docs/mcp.md#append): the user message and its reply
 * join the transcript and the window as a turn's do, under the entity's lease (409 while a turn
 * runs), in one unit of work. Nothing is billed (no model was called; the ledger gets a zero row
 * with the tokens, as the record of the write), and the next turn rotates if the window is over.
 */
export async function appendExchange(deps: EngineDeps, entity: EntityRow, input: unknown, keyId?: string): Promise<ExchangeResult> {
  const { content, reply } = checkExchange(input);
  if (entity.transcriptTokens >= entity.capTokens) throw readOnly(entity);
  const tok = await loadTokenEstimator();
  const tokens = [tok.count(content), tok.count(reply)] as const;
  if (tokens[0] + tokens[1] > entity.budgetTokens) {
    throw new BadRequestError(`the exchange is ${tokens[0] + tokens[1]} tokens, larger than the window budget of ${entity.budgetTokens} tokens`, { hint: 'record it in smaller exchanges' });
  }
  const lease = await takeLease(deps, {
    subject: entitySubject(entity.id),
    refused: () => answering(entity),
  });
  try {
    // Read under the lease: no turn adds messages meanwhile.
    const now = (await deps.store.entities.get(entity.accountId, entity.id)) ?? entity;
    if (now.transcriptTokens >= now.capTokens) throw readOnly(now);
    const write = exchangeWrite(deps, now, await deps.store.entities.window(now.id), [content, reply], tokens, keyId);
    await lease.write((claim) => deps.store.entities.commitTurn({ ...write, lease: claim }), () => leaseTakenOver(now), true);
    deps.windows.delete(now.id);
    return { object: 'list', entity_id: now.id, data: write.messages.map(toMessage) };
  } finally {
    await lease.release();
  }
}

/** The exchange's unit of work, but for its lease: two messages, two message blocks, the counters and a zero charge. */
function exchangeWrite(deps: EngineDeps, entity: EntityRow, window: BlockRow[], texts: readonly [string, string], tokens: readonly [number, number], keyId?: string): Omit<EntityTurnWrite, 'lease'> {
  const at = deps.clock.iso();
  const seq = entity.transcriptMessages + 1;
  const position = (window[window.length - 1]?.position ?? -1) + 1;
  const messages: MessageRow[] = [
    { seq, role: 'user', content: texts[0], tokens: tokens[0], createdAt: at },
    { seq: seq + 1, role: 'assistant', content: texts[1], tokens: tokens[1], createdAt: at },
  ];
  const blocks: BlockRow[] = messages.map((m, i) => ({ id: deps.newId(), position: position + i, kind: 'message', role: m.role, content: m.content, tokens: m.tokens, coversFrom: m.seq, coversTo: m.seq }));
  const added = tokens[0] + tokens[1];
  return {
    entityId: entity.id,
    messages,
    deleteBlockIds: [],
    insertBlocks: blocks,
    counters: { transcriptMessages: seq + 1, transcriptTokens: entity.transcriptTokens + added, windowTokens: entity.windowTokens + added, windowBlocks: entity.windowBlocks + 2, updatedAt: at },
    charge: { accountId: entity.accountId, entityId: entity.id, keyId: keyId ?? null, model: entity.model, inputTokens: 0, outputTokens: 0, costUsd: 0, createdAt: at },
  };
}

function checkExchange(input: unknown): ExchangeInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new BadRequestError('the body must be an object with content and reply');
  const extra = Object.keys(input).filter((k) => k !== 'content' && k !== 'reply');
  if (extra.length) throw new BadRequestError(`unknown field ${JSON.stringify(extra[0])}: an exchange takes content and reply`);
  const { content, reply } = input as Record<string, unknown>;
  return { content: nonEmpty(content, 'content'), reply: nonEmpty(reply, 'reply') };
}

function nonEmpty(value: unknown, field: string): string {
  if (value === undefined || value === null) throw new BadRequestError(`${field} is required`);
  if (typeof value !== 'string') throw new BadRequestError(`${field} must be a string`);
  if (value.trim() === '') throw new BadRequestError(`${field} is empty`);
  return value;
}

/**
 * The ranked retriever (retrieve.ts, the one automatic recall and the recall tool use) over the
 * whole transcript, within `max_tokens`: for a client that does not see the window, nothing is
 * left out as already shown.
 */
export async function recallFor(deps: EngineDeps, entity: EntityRow, input: RecallInput): Promise<RecallResult> {
  const q = input?.q;
  if (typeof q !== 'string' || q.trim() === '') throw new BadRequestError('q is required: the words to recall');
  if (q.length > SEARCH_QUERY_MAX_CHARS) throw new BadRequestError(`q is ${q.length} characters; at most ${SEARCH_QUERY_MAX_CHARS}`);
  const budget = input.max_tokens ?? RECALL_MAX_TOKENS_DEFAULT;
  if (!Number.isSafeInteger(budget) || budget < 1 || budget > RECALL_MAX_TOKENS_MAX) {
    throw new BadRequestError(`max_tokens must be an integer from 1 to ${RECALL_MAX_TOKENS_MAX}`);
  }
  const found = await retrieve(deps, entity, q, { budgetTokens: budget });
  // Which messages, without their text a second time: `text` holds it, within max_tokens.
  const messages = found.messages.map(({ seq, role, tokens }) => ({ seq, role, tokens }));
  return { object: 'entity.recall', entity_id: entity.id, text: found.text, tokens: found.tokens, messages };
}
