import type { Entity, EntityCompletion, FinishReason, TranscriptMessage, WindowBlock } from '../../core/wire/entity-types.js';
import type { ProviderUsage } from '../../providers/spec.js';
import type { BlockRow, EntityRow, MessageRow } from '../../store/types.js';
import { type CompletionHead, chatCompletion } from '../generation/completion.js';
import type { Reply } from '../generation/reply.js';
import type { Retrieved } from './retrieve.js';
import { recallModeOf, recallTokensOf } from './entity-rules.js';

/** Store rows -> wire objects (seed 001: docs/design.md#the-two-wire-contracts). Field order is fixed: exports hash these bytes. */

/** `engineRecallTokens` (engine.recallTokens) gives the recall bound in effect when the entity has none of its own. */
export function toEntity(row: EntityRow, withWindowCounts: boolean, engineRecallTokens: number): Entity {
  return {
    id: row.id,
    object: 'entity',
    name: row.name,
    instructions: row.instructions,
    model: row.model,
    state: row.state,
    read_only: row.transcriptTokens >= row.capTokens,
    transcript: { messages: row.transcriptMessages, tokens: row.transcriptTokens, cap_tokens: row.capTokens },
    window: withWindowCounts
      ? { budget_tokens: row.budgetTokens, tokens: row.windowTokens, blocks: row.windowBlocks }
      : { budget_tokens: row.budgetTokens },
    ...(row.recall ? { recall: recallModeOf(row.recall) as 'tool' | 'auto' } : {}),
    ...(row.recall || row.recallTokens ? { recall_tokens: recallTokensOf(row, engineRecallTokens) } : {}),
    ...(row.memoryTool ? { memory_tool: true as const } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function toMessage(m: MessageRow): TranscriptMessage {
  return { seq: m.seq, role: m.role, content: m.content, tokens: m.tokens, created_at: m.createdAt };
}

export function toBlock(b: BlockRow): WindowBlock {
  return { id: b.id, kind: b.kind, role: b.role, content: b.content, tokens: b.tokens, covers: [b.coversFrom, b.coversTo] };
}

/** The bytes of `window.json` (and of the JSON export's `window` member). */
export function windowDocument(budgetTokens: number, tokens: number, blocks: WindowBlock[]): string {
  return JSON.stringify({ budget_tokens: budgetTokens, tokens, blocks });
}

/** An entity's reply as a turn settles it, in the engine's terms. */
export interface EntityReply {
  head: CompletionHead;
  entityId: string;
  reply: Reply;
  /** What the reply is counted as (the provider's counts, else the estimates). */
  usage: ProviderUsage;
  finish?: FinishReason;
  /** What automatic recall put in the prompt, when it did. */
  recalled?: Retrieved;
}

/** A turn's reply as the seed's chat.completion: what the turn returns and stores under its idempotency key. */
export function toCompletion(r: EntityReply): EntityCompletion {
  return {
    ...chatCompletion(r.head, r.reply, r.usage, r.finish),
    entity_id: r.entityId,
    ...(r.recalled ? { recalled: r.recalled.messages } : {}),
  };
}
