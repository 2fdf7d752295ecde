import type { BlockRow, EntityRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import type { MessageRow } from '../../../store/types.js';
import { type InViewRecall, type RecallTail, isRecallTail } from './recall-block.js';
import { decodeTail, encodeTail } from './text-refs.js';
import { WindowState } from './window-state.js';

/** How many of the latest live user messages are asked for a turn record that lists the window's recall (an imported message has none). */
const RECORDS_TRIED = 8;

/**
 * An entity's window as its stored blocks and what their user messages recalled, read from the
 * latest turn record that lists it: the same prompt the last turn's process would build next.
 */
export async function loadWindow(deps: EngineDeps, entity: EntityRow): Promise<WindowState> {
  return windowOf(deps, entity.id, await deps.store.entities.window(entity.id));
}

/** `blocks` (taken over) with what their live user messages recalled, read as loadWindow reads it. */
export async function windowOf(deps: EngineDeps, entityId: string, blocks: BlockRow[]): Promise<WindowState> {
  return WindowState.of(blocks, await liveRecalls(deps, entityId, blocks.filter((b) => b.kind === 'message' && b.role === 'user').map((b) => b.coversFrom)));
}

async function liveRecalls(deps: EngineDeps, entityId: string, userSeqs: number[]): Promise<Map<number, InViewRecall> | undefined> {
  for (let i = userSeqs.length - 1; i >= Math.max(0, userSeqs.length - RECORDS_TRIED); i--) {
    const record = await deps.store.history.turnWindow(entityId, userSeqs[i]);
    if (!record) continue;
    const tail = record.tail ? (JSON.parse(record.tail) as unknown) : null;
    return isRecallTail(tail) ? recallsOf(deps, entityId, tail) : undefined;
  }
  return undefined;
}

/** `recall` with its stored form, made from the transcript rows it quotes. */
export function storedForm(recall: InViewRecall, sources: Map<number, MessageRow>): InViewRecall {
  return recall.stored === undefined ? { ...recall, stored: encodeTail([{ role: 'user', content: recall.text }], sources)[0] } : recall;
}

/** The recalls a record's tail lists, their texts rebuilt from the transcript. */
export async function recallsOf(deps: EngineDeps, entityId: string, tail: RecallTail): Promise<Map<number, InViewRecall>> {
  const texts = await decodeTail(deps, entityId, tail.recalls.map((r) => r[3]));
  return new Map(tail.recalls.map(([seq, tokens, seqs, stored], i) => [seq, { text: String(texts[i].content), tokens, seqs, stored }]));
}
