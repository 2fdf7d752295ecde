import type { BlockRow, RotationRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { packIds } from '../entities/window/block-ids.js';
import { BlockEncoder, type BlockRef } from '../entities/window/block-refs.js';
import type { SummaryUsage } from '../entities/window/summarize.js';

/** What wrote an import's summary: the entity's model (--summarize), or the plain note (no model). */
export interface FoldRoute {
  provider: string;
  modelId: string;
}

/** The route a rotation record names for the note an import writes without a model. */
export const NOTE_ROUTE: FoldRoute = { provider: 'mgpt', modelId: 'import-note' };

/** One fold of a conversation's window: the blocks it took, the summary that replaces them, the window after. */
export interface FoldStep {
  span: readonly BlockRow[];
  summary: BlockRow;
  after: readonly BlockRow[];
  route: FoldRoute;
  usage?: SummaryUsage;
}

/**
 * One import's fold of one entity's window, kept as ONE rotation (trigger `import`) however many
 * of the import's conversations fold into it: each conversation is its own transaction; one that
 * takes the window over its budget again folds into the same summary (one note, not one a fold)
 * and rewrites the same record, and the import ends with one more fold down to the target. So the
 * record reads as if the whole import had been appended and folded once: its window before is
 * the window before the import with every imported message in it, which `rotate --undo` brings
 * back, and `rotations` lists it.
 */
export class ImportFold {
  private n = 0;
  private id = '';
  private createdAt = '';
  /** The window before the import, as refs (read once, at its first conversation). */
  private before: BlockRef[] | undefined;
  /** The seqs the import appended so far. */
  private added: [number, number] = [0, 0];
  /** Ids of the message blocks folded, from `fromSeq` on, in seq order. */
  private readonly folded: string[] = [];
  private fromSeq = 0;
  /** The summary the first fold took in, when it was not this import's (its text is kept before the note). */
  private earlierText: string | undefined;
  private summaryId = '';
  private readonly usage = { inputTokens: 0, outputTokens: 0, cachedTokens: null as number | null };

  constructor(
    private readonly deps: EngineDeps,
    private readonly entityId: string,
  ) {}

  /** Whether this import has folded the window already (its last fold then brings the window to the target). */
  get folding(): boolean {
    return this.n > 0;
  }

  /** Called with each conversation's window before it is appended to, and the seqs it appends. */
  async begin(existing: readonly BlockRow[], from: number, to: number): Promise<void> {
    if (!this.before) {
      this.before = await new BlockEncoder(this.deps, this.entityId).encode(existing);
      this.added = [from, to];
    }
    this.added[1] = to;
  }

  /** The first seq the import appended. */
  get firstImported(): number {
    return this.added[0];
  }

  /** The earlier summary a note keeps before it: the one the first fold took in, never this import's own. */
  earlier(span: readonly BlockRow[]): string | undefined {
    const first = span[0];
    if (first?.kind !== 'summary') return undefined;
    return first.id === this.summaryId ? this.earlierText : first.content;
  }

  /** The first message the import's rotation folds (so far, or with this span). */
  firstFolded(span: readonly BlockRow[]): number {
    return this.folding ? this.fromSeq : (span.find((b) => b.kind === 'message')?.coversFrom ?? span[0].coversFrom);
  }

  /** Takes a fold in and gives the record as it now stands (a new rotation at the import's first fold). */
  async record(step: FoldStep): Promise<RotationRow> {
    if (!this.folding) await this.start(step.span);
    for (const b of step.span) if (b.kind === 'message') this.folded.push(b.id);
    this.summaryId = step.summary.id;
    this.usage.inputTokens += step.usage?.inputTokens ?? 0;
    this.usage.outputTokens += step.usage?.outputTokens ?? 0;
    if (step.usage?.cachedTokens !== undefined) this.usage.cachedTokens = (this.usage.cachedTokens ?? 0) + step.usage.cachedTokens;
    const encoder = new BlockEncoder(this.deps, this.entityId, { id: step.summary.id, content: step.summary.content, n: this.n });
    return {
      entityId: this.entityId, n: this.n, id: this.id, createdAt: this.createdAt, trigger: 'import', seq: null,
      fromSeq: this.fromSeq, toSeq: step.summary.coversTo,
      summaryId: step.summary.id, coversFrom: step.summary.coversFrom, summaryText: step.summary.content, summaryTokens: step.summary.tokens,
      provider: step.route.provider, model: step.route.modelId,
      promptTokens: this.usage.inputTokens, cachedTokens: this.usage.cachedTokens, completionTokens: this.usage.outputTokens,
      blocksBefore: JSON.stringify(this.windowBefore()),
      blocksAfter: JSON.stringify(await encoder.encode(step.after)),
      foldedIds: packIds(this.folded),
      undone: false,
    };
  }

  private async start(span: readonly BlockRow[]): Promise<void> {
    this.fromSeq = this.firstFolded(span);
    this.n = (await this.deps.store.history.lastRotation(this.entityId)) + 1;
    this.id = this.deps.newId();
    this.createdAt = this.deps.clock.iso();
    this.earlierText = span[0].kind === 'summary' ? span[0].content : undefined;
  }

  /** The window before the import, followed by every message it appended (one block a message). */
  private windowBefore(): BlockRef[] {
    const refs = [...(this.before ?? [])];
    const last = refs[refs.length - 1];
    if (Array.isArray(last) && last[1] === this.added[0] - 1) refs[refs.length - 1] = [last[0], this.added[1]];
    else refs.push([this.added[0], this.added[1]]);
    return refs;
  }
}
