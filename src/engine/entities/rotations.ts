import { createHash } from 'node:crypto';
import type { RotationList, RotationRecord } from '../../core/wire/rotation-types.js';
import type { ChatMessage, ChatModel } from '../../providers/spec.js';
import type { BlockRow, EntityRow, EntityTurnWrite, MessageRow, RotationRow, RotationTrigger, TurnWindowWrite } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { foldedSpan } from '../../core/window-plan.js';
import type { SummaryUsage } from './window/summarize.js';
import type { PreparedWindow } from './window/turn-window.js';
import type { WindowState } from './window/window-state.js';
import { BlockEncoder, type BlockRef, resolveBlocks } from './window/block-refs.js';
import { type InViewRecall, recallTail } from './window/recall-block.js';
import { storedForm } from './window/load-window.js';
import { packIds } from './window/block-ids.js';

/** What of a turn its history record is made from: the window before it, and the prompt it sent. */
export interface TurnFacts {
  deps: EngineDeps;
  entity: EntityRow;
  model: ChatModel;
  /** The window before the turn. */
  window: WindowState;
  /** The prompt's messages as the last request sent them, up to the user message. */
  prompt?: ChatMessage[];
}

/**
 * A turn's history, written in its own transaction: its rotation (if it had one) and what its
 * prompt was made of. The head is recorded as it was sent (whatever came before the window),
 * never rebuilt, so `window --at` gives back the same bytes.
 */
export async function turnHistory(t: TurnFacts, prepared: PreparedWindow, seq: number): Promise<Pick<EntityTurnWrite, 'rotation' | 'turnWindow'>> {
  const { deps, entity } = t;
  const summary = prepared.plan && prepared.summary;
  const n = summary ? (await deps.store.history.lastRotation(entity.id)) + 1 : 0;
  const encoder = new BlockEncoder(deps, entity.id, summary ? { id: summary.id, content: summary.content, n } : undefined);
  const out: Pick<EntityTurnWrite, 'rotation' | 'turnWindow'> = {};
  if (prepared.plan && summary) {
    const folded = t.window.blocks.slice(0, prepared.plan.take);
    out.rotation = await rotationRow(deps, encoder, {
      entityId: entity.id, n, trigger: 'turn', seq, summary, folded, toSeq: prepared.plan.covers[1],
      before: t.window.blocks, after: prepared.head.blocks, model: t.model, usage: prepared.summaryUsage,
    });
  }
  if (t.prompt) out.turnWindow = await turnWindowWrite(encoder, t, prepared, seq);
  return out;
}

/** What a rotation record is made from. */
export interface RotationFacts {
  entityId: string;
  n: number;
  trigger: RotationTrigger;
  seq: number | null;
  summary: BlockRow;
  /** The blocks folded into the summary. */
  folded: readonly BlockRow[];
  toSeq: number;
  before: readonly BlockRow[];
  after: readonly BlockRow[];
  model: Pick<ChatModel, 'provider' | 'modelId'>;
  usage?: SummaryUsage;
}

export async function rotationRow(deps: EngineDeps, encoder: BlockEncoder, f: RotationFacts): Promise<RotationRow> {
  const messages = f.folded.filter((b) => b.kind === 'message');
  return {
    entityId: f.entityId, n: f.n, id: deps.newId(), createdAt: deps.clock.iso(), trigger: f.trigger, seq: f.seq,
    fromSeq: foldedSpan(f.folded.length ? f.folded : [f.summary], f.toSeq)[0], toSeq: f.toSeq,
    summaryId: f.summary.id, coversFrom: f.summary.coversFrom, summaryText: f.summary.content, summaryTokens: f.summary.tokens,
    provider: f.model.provider, model: f.model.modelId,
    promptTokens: f.usage?.inputTokens ?? 0, cachedTokens: f.usage?.cachedTokens ?? null, completionTokens: f.usage?.outputTokens ?? 0,
    blocksBefore: JSON.stringify(await encoder.encode(f.before)),
    blocksAfter: JSON.stringify(await encoder.encode(f.after)),
    foldedIds: packIds(messages.map((b) => b.id)),
    undone: false,
  };
}

/**
 * What the turn's prompt was made of, up to its user message: the system message as sent (the
 * head), the window's blocks by reference, and the recall each live user message carried, this
 * turn's own included (the tail). window --at rebuilds the prompt from them byte for byte (at-turn.ts),
 * and the next process's first turn takes the live messages' recall from the latest record.
 * Sets `prepared.recall`'s stored form, which the kept window carries on.
 */
async function turnWindowWrite(encoder: BlockEncoder, t: TurnFacts, prepared: PreparedWindow, seq: number): Promise<TurnWindowWrite> {
  const prompt = t.prompt ?? [];
  const head = prompt[0]?.role === 'system' ? [prompt[0]] : [];
  const recalls = new Map(prepared.head.recalled);
  if (prepared.recall) recalls.set(seq, (prepared.recall = storedForm(prepared.recall, await recalledTexts(t, prepared.recall))));
  const headJson = JSON.stringify(head);
  return {
    seq,
    headSha256: createHash('sha256').update(headJson).digest('hex'),
    head: headJson,
    blocks: JSON.stringify(await encoder.encode(prepared.head.blocks)),
    tail: JSON.stringify(recallTail(recalls)),
  };
}

/** The transcript messages the turn's recall quoted, by seq. */
async function recalledTexts(t: TurnFacts, recall: InViewRecall): Promise<Map<number, MessageRow>> {
  const rows = recall.seqs.length ? await t.deps.store.entities.messagesAt(t.entity.id, recall.seqs) : [];
  return new Map(rows.map((r) => [r.seq, r]));
}

/** The entity's rotations, oldest first, as the route lists them. */
export async function listRotations(deps: EngineDeps, entityId: string): Promise<RotationList> {
  const rows = await deps.store.history.rotations(entityId);
  return { rotations: await rotationRecords(deps, entityId, rows, rows) };
}

/** Records as the wire shows them, their blocks resolved together. */
export async function rotationRecords(deps: EngineDeps, entityId: string, rows: RotationRow[], known?: RotationRow[]): Promise<RotationRecord[]> {
  const lists = rows.flatMap((r) => [JSON.parse(r.blocksBefore) as BlockRef[], JSON.parse(r.blocksAfter) as BlockRef[]]);
  const blocks = await resolveBlocks(deps, entityId, lists, known);
  return rows.map((r, i) => ({
    id: r.id,
    created_at: r.createdAt,
    trigger: r.trigger,
    seq: r.seq,
    from_seq: r.fromSeq,
    to_seq: r.toSeq,
    summary: { text: r.summaryText, tokens: r.summaryTokens },
    route: { provider: r.provider, model: r.model },
    usage: { prompt_tokens: r.promptTokens, cached_tokens: r.cachedTokens, completion_tokens: r.completionTokens },
    blocks_before: blocks[2 * i],
    blocks_after: blocks[2 * i + 1],
    undone: r.undone,
  }));
}
