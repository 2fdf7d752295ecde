import { createHash } from 'node:crypto';
import { BadRequestError } from '../../core/errors.js';
import type { EntityHistory, RotationRow, RotationTrigger } from '../../store/types.js';
import type { BlockRef } from './window/block-refs.js';
import { packIds, unpackIds } from './window/block-ids.js';
import { isRecallTail } from './window/recall-block.js';

/**
 * The window history's part of an export archive (version 2): `rotations.json` in the tar, the
 * `rotations` member of the JSON export. Heads are numbered 1, 2, 3… in the archive (databases
 * number them their own way), so an archive exported, imported and exported again is the same bytes.
 */
export const HISTORY_FILE = 'rotations.json';

interface ArchivedRotation {
  n: number;
  id: string;
  created_at: string;
  trigger: RotationTrigger;
  seq: number | null;
  from_seq: number;
  to_seq: number;
  summary_id: string;
  covers_from: number;
  summary: { text: string; tokens: number };
  route: { provider: string; model: string };
  usage: { prompt_tokens: number; cached_tokens: number | null; completion_tokens: number };
  blocks_before: BlockRef[];
  blocks_after: BlockRef[];
  folded_ids: string[];
  undone: boolean;
}

interface ArchivedHistory {
  rotations: ArchivedRotation[];
  heads: Array<{ id: number; messages: unknown[] }>;
  turns: Array<{ seq: number; head: number; blocks: BlockRef[]; tail: unknown[] | null }>;
}

/** The bytes of `rotations.json`. */
export function historyDocument(h: EntityHistory): string {
  const number = new Map(h.heads.map((head, i) => [head.id, i + 1]));
  const doc: ArchivedHistory = {
    rotations: h.rotations.map((r) => ({
      n: r.n, id: r.id, created_at: r.createdAt, trigger: r.trigger, seq: r.seq, from_seq: r.fromSeq, to_seq: r.toSeq,
      summary_id: r.summaryId, covers_from: r.coversFrom, summary: { text: r.summaryText, tokens: r.summaryTokens },
      route: { provider: r.provider, model: r.model },
      usage: { prompt_tokens: r.promptTokens, cached_tokens: r.cachedTokens, completion_tokens: r.completionTokens },
      blocks_before: JSON.parse(r.blocksBefore), blocks_after: JSON.parse(r.blocksAfter), folded_ids: unpackIds(r.foldedIds), undone: r.undone,
    })),
    heads: h.heads.map((head, i) => ({ id: i + 1, messages: JSON.parse(head.messages) })),
    turns: h.turns.map((t) => ({ seq: t.seq, head: number.get(t.headId)!, blocks: JSON.parse(t.blocks), tail: t.tail === null ? null : JSON.parse(t.tail) })),
  };
  return JSON.stringify(doc);
}

/**
 * An archive's history, checked against its transcript (`messages` long) and with every block id
 * it names passed through `blockId` (an import without --keep-id gives the copy new ones, so an
 * undo never brings back a block id the original still uses).
 */
export function historyOf(raw: unknown, messages: number, blockId: (id: string) => string): EntityHistory {
  if (!isObject(raw) || !Array.isArray(raw.rotations) || !Array.isArray(raw.heads) || !Array.isArray(raw.turns)) fail('it must hold rotations, heads and turns');
  const doc = raw as unknown as ArchivedHistory;
  const ns = new Set<number>();
  const rotations = doc.rotations.map((r, i) => {
    const row = rotationOf(r, i, blockId);
    ns.add(row.n);
    return row;
  });
  const refs = (list: unknown, where: string) => JSON.stringify(checkRefs(list, where, ns, messages, blockId));
  for (const [i, r] of doc.rotations.entries()) {
    rotations[i].blocksBefore = refs(r.blocks_before, `rotation ${r.n}`);
    rotations[i].blocksAfter = refs(r.blocks_after, `rotation ${r.n}`);
  }
  const heads = doc.heads.map((h, i) => {
    if (!isObject(h) || h.id !== i + 1 || !Array.isArray(h.messages)) fail(`head ${i + 1} is malformed`);
    const messagesJson = JSON.stringify(h.messages);
    return { id: i + 1, sha256: createHash('sha256').update(messagesJson).digest('hex'), messages: messagesJson };
  });
  let last = 0;
  const turns = doc.turns.map((t) => {
    if (!isObject(t) || !isCount(t.seq) || t.seq % 2 !== 1 || t.seq <= last || t.seq > messages) fail('a turn record has a bad seq');
    if (!Number.isSafeInteger(t.head) || t.head < 1 || t.head > heads.length) fail(`turn ${t.seq} names no head`);
    if (t.tail !== null && !Array.isArray(t.tail) && !isRecallTail(t.tail)) fail(`turn ${t.seq} has a bad tail`);
    last = t.seq;
    return { seq: t.seq, headId: t.head, blocks: refs(t.blocks, `turn ${t.seq}`), tail: t.tail === null ? null : JSON.stringify(t.tail) };
  });
  return { rotations, heads, turns };
}

const TRIGGERS: readonly RotationTrigger[] = ['turn', 'manual', 'resummarize', 'import'];

function rotationOf(r: ArchivedRotation, i: number, blockId: (id: string) => string): RotationRow {
  const ok = isObject(r) && r.n === i + 1 && typeof r.id === 'string' && typeof r.created_at === 'string' && TRIGGERS.includes(r.trigger)
    && (r.seq === null || isCount(r.seq)) && isCount(r.from_seq) && isCount(r.to_seq) && r.from_seq <= r.to_seq
    && typeof r.summary_id === 'string' && isCount(r.covers_from) && isObject(r.summary) && typeof r.summary.text === 'string'
    && isCount(r.summary.tokens) && isObject(r.route) && typeof r.route.provider === 'string' && typeof r.route.model === 'string'
    && isObject(r.usage) && isCount(r.usage.prompt_tokens) && (r.usage.cached_tokens === null || isCount(r.usage.cached_tokens))
    && isCount(r.usage.completion_tokens) && Array.isArray(r.folded_ids) && r.folded_ids.every((x) => typeof x === 'string')
    && typeof r.undone === 'boolean';
  if (!ok) fail(`rotation ${i + 1} is malformed`);
  return {
    entityId: '', n: r.n, id: r.id, createdAt: r.created_at, trigger: r.trigger, seq: r.seq, fromSeq: r.from_seq, toSeq: r.to_seq,
    summaryId: blockId(r.summary_id), coversFrom: r.covers_from, summaryText: r.summary.text, summaryTokens: r.summary.tokens,
    provider: r.route.provider, model: r.route.model, promptTokens: r.usage.prompt_tokens, cachedTokens: r.usage.cached_tokens,
    completionTokens: r.usage.completion_tokens, blocksBefore: '', blocksAfter: '', foldedIds: packIds(r.folded_ids.map(blockId)), undone: r.undone,
  };
}

/** Block refs that point only at rotations of the archive and seqs of its transcript. */
function checkRefs(list: unknown, where: string, ns: Set<number>, messages: number, blockId: (id: string) => string): BlockRef[] {
  if (!Array.isArray(list)) fail(`${where} has no block list`);
  return list.map((r: unknown) => {
    if (typeof r === 'number') {
      if (!ns.has(r)) fail(`${where} names rotation ${r}, which the archive does not hold`);
      return r;
    }
    if (Array.isArray(r)) {
      if (r.length !== 2 || !isCount(r[0]) || !isCount(r[1]) || r[0] < 1 || r[0] > r[1] || r[1] > messages) fail(`${where} names seqs outside the transcript`);
      return [r[0], r[1]] as [number, number];
    }
    const b = r as Record<string, unknown>;
    if (!isObject(b) || typeof b.id !== 'string' || typeof b.content !== 'string' || !isCount(b.tokens) || !Array.isArray(b.covers)) fail(`${where} has a malformed block`);
    return { ...(b as never as Extract<BlockRef, { id: string }>), id: blockId(b.id as string) };
  });
}

function isObject(x: unknown): x is Record<string, any> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isCount(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function fail(message: string): never {
  throw new BadRequestError(`import: ${HISTORY_FILE}: ${message}`);
}
