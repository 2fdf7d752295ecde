import { routeOf } from '../generation/model-call.js';
import type { TokenEstimator } from '../../core/text/tokens.js';
import type { ChatSource } from '../../core/wire/chat-import.js';
import type { BlockRow, MessageRow, RotationRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { type SummaryUsage, summarizeSpan, summaryBlock } from '../entities/window/summarize.js';
import { type FoldRoute, type ImportFold, NOTE_ROUTE } from './import-fold.js';
import { type FoldPlan, importNoteText, planFold } from './plan.js';
import { mapInSlices } from '../../core/lane.js';

/** The window after an import: what to delete, what to insert, and its totals. */
export interface ImportedWindow {
  deleteBlockIds: string[];
  insertBlocks: BlockRow[];
  tokens: number;
  blocks: number;
  /** The import's rotation record as it now stands, when it folded. */
  rotation?: RotationRow;
}

export interface WindowInput {
  entityId: string;
  budget: number;
  instructions: { text: string; tokens: number };
  /** The window as stored (empty for a new entity). */
  existing: readonly BlockRow[];
  /** The messages the import appends, with their seqs. */
  added: readonly MessageRow[];
  source: ChatSource;
  summarize: boolean;
  /** The entity's model: `summarize` asks it, as the entity's own rotations do. */
  model: string;
  /** The entity's pinned memory, sent after the instructions as a turn sends it (the summary fits it too). */
  memory?: { text: string; tokens: number };
  /** Ends the summary's requests: the import was cancelled. */
  signal: AbortSignal;
  /** This import's fold of this entity's window, across its conversations. */
  fold: ImportFold;
  /** The created_at of a seq the import did not bring (an earlier message the fold takes in). */
  timeOf: (seq: number) => Promise<string>;
}

/**
 * Every imported message enters the window as a message block; when the window is then over the
 * budget, the oldest blocks are folded into one summary as a rotation would (the tail that fits
 * stays live), recorded as the import's rotation (see ImportFold): a later conversation of the
 * import that takes the window over the budget again folds into the same summary. The summary is
 * the entity's model's with `summarize`, else a plain note saying what was imported and that
 * search and recall reach it: no model is called.
 */
export async function windowAfterImport(deps: EngineDeps, tok: TokenEstimator, w: WindowInput): Promise<ImportedWindow> {
  await w.fold.begin(w.existing, w.added[0].seq, w.added[w.added.length - 1].seq);
  let position = w.existing.reduce((p, b) => Math.max(p, b.position), 0);
  // In slices: a conversation of 100,000 messages gets as many ids, which held the event loop 0.2 s in one piece.
  const fresh: BlockRow[] = await mapInSlices(w.added, (m) => ({
    id: deps.newId(),
    position: ++position,
    kind: 'message',
    role: m.role,
    content: m.content,
    tokens: m.tokens,
    coversFrom: m.seq,
    coversTo: m.seq,
  }));
  return foldWindow(deps, tok, w, fresh, false);
}

/**
 * The fold that ends an import that folded the window: what its last conversations added since
 * its last fold goes into the same summary, down to the rotation target, so the window after the
 * import is at the target. Null when it is there already (or the import never folded).
 */
export async function finalFold(deps: EngineDeps, tok: TokenEstimator, w: WindowInput): Promise<ImportedWindow | null> {
  if (!w.fold.folding) return null;
  const folded = await foldWindow(deps, tok, w, [], true);
  return folded.rotation ? folded : null;
}

/** The window with `fresh` appended, folded when over the budget (`toTarget`: when over the rotation target). */
async function foldWindow(deps: EngineDeps, tok: TokenEstimator, w: WindowInput, fresh: BlockRow[], toTarget: boolean): Promise<ImportedWindow> {
  const all = [...w.existing, ...fresh];
  const fold = planFold(all, w.budget, deps.limits.rotation, toTarget);
  if (!fold) return { deleteBlockIds: [], insertBlocks: fresh, tokens: sumTokens(all), blocks: all.length };
  const span = all.slice(0, fold.take);
  const kept = all.slice(fold.take);
  const written = await summaryText(deps, tok, w, span, fold);
  const summary = summaryBlock(deps.newId(), span, written.text, tok.count(written.text), fold.covers);
  const rotation = await w.fold.record({ span, summary, after: [summary, ...kept], route: written.route, usage: written.usage });
  const existingIds = new Set(w.existing.map((b) => b.id));
  return {
    deleteBlockIds: span.filter((b) => existingIds.has(b.id)).map((b) => b.id),
    insertBlocks: [summary, ...kept.filter((b) => !existingIds.has(b.id))],
    tokens: summary.tokens + sumTokens(kept),
    blocks: 1 + kept.length,
    rotation,
  };
}

/** The fold's summary: the entity's model's (`summarize`), else the import's note. */
async function summaryText(deps: EngineDeps, tok: TokenEstimator, w: WindowInput, span: BlockRow[], fold: FoldPlan): Promise<{ text: string; route: FoldRoute; usage?: SummaryUsage }> {
  if (w.summarize) {
    const model = await deps.chatModel(w.model);
    const head = { ...w.instructions, ...(w.memory ? { memory: w.memory } : {}) };
    const fixed = (w.instructions.text ? w.instructions.tokens : 0) + (w.memory?.tokens ?? 0);
    const fit = await deps.calibration.fit(model, fixed, (w.instructions.text ? 1 : 0) + (w.memory ? 1 : 0));
    const s = await summarizeSpan(routeOf(deps, model), tok, span, fold.maxSummaryTokens, fit, deps.calibration, w.signal, head);
    if (s.text.trim()) return { text: s.text, route: { provider: model.provider, modelId: model.modelId }, usage: s.usage };
  }
  const folded: [number, number] = [w.fold.firstFolded(span), fold.covers[1]];
  const firstImported = Math.max(folded[0], w.fold.firstImported);
  const dates: [string, string] = [await w.timeOf(firstImported), await w.timeOf(folded[1])];
  const facts = { source: w.source, folded, firstImported, dates };
  return { text: importNoteText(facts, w.fold.earlier(span), fold.maxSummaryTokens, (t) => tok.count(t)), route: NOTE_ROUTE };
}

function sumTokens(bs: ReadonlyArray<{ tokens: number }>): number {
  let t = 0;
  for (const b of bs) t += b.tokens;
  return t;
}
