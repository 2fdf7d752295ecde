import type { WindowBlock } from '../../../core/wire/entity-types.js';
import type { BlockRow, MessageRow, RotationRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import { toBlock } from '../entity-wire.js';
import { unpackIds } from './block-ids.js';

/**
 * A window block as the history stores it, so that the history holds no second copy of the
 * transcript: a summary as the number of the rotation that wrote it (its text is that record's),
 * a run of message blocks as the seqs [from, to] (their text is the transcript's), and anything
 * else (a summary from before the history was kept, or imported) whole.
 */
export type BlockRef = number | [number, number] | WindowBlock;

/** A summary block this write itself records: its id and its rotation's number. */
export interface OwnSummary {
  id: string;
  content: string;
  n: number;
}

/** Turns blocks into refs, looking up which rotation wrote each summary (its id and its text must match). */
export class BlockEncoder {
  private readonly writers = new Map<string, number | undefined>();

  constructor(
    private readonly deps: EngineDeps,
    private readonly entityId: string,
    private readonly own?: OwnSummary,
  ) {}

  async encode(blocks: readonly BlockRow[]): Promise<BlockRef[]> {
    // The window's shape (summaries, then one message a seq, in order) makes its messages one range:
    // then only the summaries are looked at, so a turn's record costs the same in any window.
    let lead = 0;
    while (lead < blocks.length && blocks[lead].kind === 'summary') lead++;
    const first = blocks[lead];
    const last = blocks[blocks.length - 1];
    if (first && last.coversTo - first.coversFrom === blocks.length - 1 - lead && first.kind === 'message' && last.kind === 'message') {
      return [...(await this.encodeEach(blocks.slice(0, lead))), [first.coversFrom, last.coversTo]];
    }
    return this.encodeEach(blocks);
  }

  private async encodeEach(blocks: readonly BlockRow[]): Promise<BlockRef[]> {
    const out: BlockRef[] = [];
    for (const b of blocks) {
      const last = out[out.length - 1];
      if (b.kind === 'message' && b.coversFrom === b.coversTo) {
        if (Array.isArray(last) && last[1] === b.coversFrom - 1) last[1] = b.coversFrom;
        else out.push([b.coversFrom, b.coversFrom]);
        continue;
      }
      out.push(b.kind === 'summary' ? ((await this.writer(b)) ?? toBlock(b)) : toBlock(b));
    }
    return out;
  }

  private async writer(b: BlockRow): Promise<number | undefined> {
    if (this.own && b.id === this.own.id && b.content === this.own.content) return this.own.n;
    const key = `${b.id}\0${b.content}`;
    if (!this.writers.has(key)) this.writers.set(key, await this.deps.store.history.summaryWriter(this.entityId, b.id, b.content));
    return this.writers.get(key);
  }
}

/**
 * Turns lists of refs back into blocks, reading what they point at once for all of them: the
 * rotations (given, or read by number), the transcript over the seqs they span, and the ids of
 * message blocks (kept by the rotation that folded them, or still in the window).
 */
export async function resolveBlocks(deps: EngineDeps, entityId: string, lists: BlockRef[][], known?: RotationRow[]): Promise<WindowBlock[][]> {
  const refs = lists.flat();
  const ranges = refs.filter((r): r is [number, number] => Array.isArray(r));
  const ns = refs.filter((r): r is number => typeof r === 'number');
  const rotations = new Map((known ?? (ns.length ? await deps.store.history.rotationsNumbered(entityId, [...new Set(ns)]) : [])).map((r) => [r.n, r]));
  let seqs: Sources = { messages: new Map(), ids: new Map() };
  if (ranges.length) {
    const from = Math.min(...ranges.map((r) => r[0]));
    const to = Math.max(...ranges.map((r) => r[1]));
    seqs = await sources(deps, entityId, from, to, known);
  }
  return lists.map((list) => list.flatMap((r) => blocksOf(r, rotations, seqs)));
}

/** What message blocks are made from: the transcript's messages and the blocks' ids, by seq. */
interface Sources {
  messages: Map<number, MessageRow>;
  ids: Map<number, string>;
}

async function sources(deps: EngineDeps, entityId: string, from: number, to: number, known?: RotationRow[]): Promise<Sources> {
  const { entities, history } = deps.store;
  const rows = await entities.messagesUpTo(entityId, from - 1, to, to - from + 1);
  const messages = new Map(rows.map((m) => [m.seq, m]));
  const ids = new Map<number, string>();
  const folding = known
    ? known.filter((r) => r.trigger !== 'resummarize' && r.toSeq >= from && r.fromSeq <= to)
    : await history.rotationsFolding(entityId, from, to);
  for (const r of folding) {
    unpackIds(r.foldedIds).forEach((id, i) => ids.set(r.fromSeq + i, id));
  }
  // Blocks not folded yet are in the window; ids the window holds win (an undone fold brought them back as they were).
  for (const b of await entities.window(entityId)) if (b.kind === 'message') ids.set(b.coversFrom, b.id);
  return { messages, ids };
}

function blocksOf(r: BlockRef, rotations: Map<number, RotationRow>, s: Sources): WindowBlock[] {
  if (typeof r === 'number') {
    const rot = rotations.get(r);
    if (!rot) throw new Error(`the window history names rotation ${r}, which is not stored`);
    return [{ id: rot.summaryId, kind: 'summary', role: 'system', content: rot.summaryText, tokens: rot.summaryTokens, covers: [rot.coversFrom, rot.toSeq] }];
  }
  if (!Array.isArray(r)) return [r];
  const out: WindowBlock[] = [];
  for (let seq = r[0]; seq <= r[1]; seq++) {
    const m = s.messages.get(seq);
    if (!m) throw new Error(`the window history names message ${seq}, which is not stored`);
    out.push({ id: s.ids.get(seq) ?? '', kind: 'message', role: m.role, content: m.content, tokens: m.tokens, covers: [seq, seq] });
  }
  return out;
}

/** Wire blocks as store rows (positions 1, 2, 3… in order): for a window written whole. */
export function blockRows(blocks: readonly WindowBlock[]): BlockRow[] {
  return blocks.map((b, i) => ({
    id: b.id, position: i + 1, kind: b.kind, role: b.role, content: b.content, tokens: b.tokens, coversFrom: b.covers[0], coversTo: b.covers[1],
  }));
}
