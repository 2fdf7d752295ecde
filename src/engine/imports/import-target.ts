import { type ChatSource, IMPORT_REPORT_ROWS, type ImportedConversation } from '../../core/wire/chat-import.js';
import { ENTITY_MODEL, ENTITY_NAME_MAX } from '../../core/wire/entity-types.js';
import { CancelledError, ConflictError, NotFoundError } from '../../core/errors.js';
import { entityLabel } from '../../core/ref.js';
import { DEFAULT_RECALL_MODE } from '../../core/text/recall-query.js';
import { type TokenEstimator, countEach } from '../../core/text/tokens.js';
import type { EntityRow, ImportSourceRow, MessageRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { FreeNames } from '../entities/entity-names.js';
import { recallCode } from '../entities/entity-rules.js';
import { pinnedMemory } from '../entities/memory.js';
import { type HeldLease, entitySubject, takeLease } from '../support/lease.js';
import type { SourceConversation } from './conversation.js';
import type { ImportPlan } from './options.js';
import { resolveInto } from './into.js';
import { type ImportedWindow, finalFold, windowAfterImport } from './import-window.js';
import { ImportFold } from './import-fold.js';
import { refuseOverCap } from './into-room.js';
import { type ShapedMessage, shapeTranscript } from './plan.js';
import type { ReadConversation } from './read-export.js';

type Base = Pick<ImportedConversation, 'source_id' | 'title' | 'branches_left_out'>;

/** A conversation's messages ready to write: shaped, counted, and where its source stops. */
interface Ready {
  conv: SourceConversation;
  messages: ShapedMessage[];
  tokens: number[];
  source: ImportSourceRow;
}

/** Writes each conversation of one import run where it goes: a new entity, or the --into one. */
export class ImportTarget {
  private readonly rows = new Map<string, EntityRow>();
  private omitted = 0;
  private into: { row: EntityRow | null; name: string; lease?: HeldLease } | undefined;
  private readonly names: FreeNames;
  /** Token counts checkRoom made, by conversation and first message, until their write takes them. */
  private readonly counted = new Map<string, number[]>();
  private readonly folds = new Map<string, ImportFold>();

  constructor(
    private readonly deps: EngineDeps,
    private readonly tok: TokenEstimator,
    private readonly accountId: string,
    private readonly source: ChatSource,
    private readonly plan: ImportPlan,
    /** Aborted when the import is cancelled: the conversation in progress writes nothing, and no other starts. */
    private readonly signal: AbortSignal = new AbortController().signal,
  ) {
    this.names = new FreeNames(deps.store, accountId);
  }

  /** The --into entity: an existing one (its lease held for the run) or, named so, one the first conversation makes. */
  async openInto(ref: string): Promise<void> {
    const row = await resolveInto(this.deps, ref, this.accountId);
    this.into = { row: row ?? null, name: ref };
    if (row && !this.plan.dryRun) this.into.lease = await this.lease(row);
  }

  /** One conversation, in one transaction; an error names it. */
  async each(c: ReadConversation): Promise<ImportedConversation> {
    if (this.signal.aborted) throw new CancelledError('the import was cancelled: the conversations before this one are imported');
    try {
      return await this.one(c.conversation);
    } catch (err) {
      if (this.signal.aborted) throw new CancelledError(`the import was cancelled during conversation ${JSON.stringify(c.conversation.title)}: it is not imported, the ones before it are`);
      if (err instanceof Error) err.message = `conversation ${JSON.stringify(c.conversation.title)} (${c.conversation.id}, at byte ${c.offset}): ${err.message}`;
      throw err;
    }
  }

  /** The entities made or added to, as they are now: the first IMPORT_REPORT_ROWS, and how many more. */
  touched(): { rows: EntityRow[]; omitted: number } {
    return { rows: [...this.rows.values()], omitted: this.omitted };
  }

  /**
   * Ends an --into run that folded the entity's window: what its last conversations added since
   * its last fold is folded down to the rotation target, so the window after the import is there.
   */
  async finish(): Promise<void> {
    const into = this.into;
    // A cancelled import stops after its last conversation: its window is within the budget, not folded further.
    if (!into?.row || !into.lease || this.plan.dryRun || this.signal.aborted || !this.folds.get(into.row.id)?.folding) return;
    const row = this.rows.get(into.row.id) ?? into.row;
    const lease = into.lease;
    const { store } = this.deps;
    const existing = await store.entities.window(row.id);
    const timeOf = async (seq: number) => (await store.entities.messagesAt(row.id, [seq]))[0]?.createdAt ?? row.createdAt;
    const memory = this.plan.summarize ? await pinnedMemory(this.deps, row.id) : undefined;
    const head = { text: row.instructions, tokens: row.instructionsTokens };
    const w = await finalFold(this.deps, this.tok, { ...this.windowBase(row.id, row.model, row.budgetTokens, head), memory, existing, added: [], timeOf });
    if (!w) return;
    const counters = { transcriptMessages: row.transcriptMessages, transcriptTokens: row.transcriptTokens, windowTokens: w.tokens, windowBlocks: w.blocks, updatedAt: this.deps.clock.iso() };
    const append = { entityId: row.id, messages: [], deleteBlockIds: w.deleteBlockIds, insertBlocks: w.insertBlocks, counters };
    await lease.write((claim) => store.entities.importChat({ append: { ...append, lease: claim }, rotation: w.rotation }), leaseTaken(row), false);
    this.keep({ ...row, ...counters });
  }

  async close(): Promise<void> {
    await this.into?.lease?.release();
  }

  /**
   * --into: refuses the run before anything is written when what it would add reaches the
   * entity's transcript cap (the entity would be read-only, and the rest skipped). The counts are
   * kept for the writes that follow, so nothing is counted twice.
   */
  async checkRoom(conversations: AsyncIterable<ReadConversation>): Promise<void> {
    const into = this.into;
    if (!into) return;
    let adding = 0;
    for await (const c of conversations) {
      if (this.signal.aborted) throw new CancelledError('the import was cancelled before it wrote anything');
      const next = await this.next(c.conversation);
      if ('from' in next) adding += sum((await this.ready(c.conversation, next.from, next.continued, true)).tokens);
    }
    const row = into.row ?? undefined;
    refuseOverCap({ ref: into.name, row, adding, cap: row?.capTokens ?? this.deps.limits.transcriptCap, max: this.deps.limits.maxTranscriptCap });
  }

  private async one(conv: SourceConversation): Promise<ImportedConversation> {
    const next = await this.next(conv);
    if (!('from' in next)) return next;
    const r = await this.ready(conv, next.from, next.continued);
    return next.prior ? this.append(baseOf(conv), next.prior.entityId, r, 'updated') : this.fresh(baseOf(conv), r);
  }

  /** What comes of a conversation: its outcome when nothing is written, else the messages to write from (and where to). */
  private async next(conv: SourceConversation): Promise<ImportedConversation | { from: number; continued: boolean; prior?: ImportSourceRow }> {
    const base = baseOf(conv);
    if (conv.refused !== undefined) return { ...base, outcome: 'refused', reason: conv.refused, entity_id: null, messages: 0, tokens: 0, seqs: null };
    if (conv.messages.length === 0) return skipped(base, 'empty: no messages on its current path', null);
    const prior = await this.prior(conv.id);
    if (!prior) return { from: 0, continued: false };
    if (!this.plan.update) return skipped(base, 'imported before (--update appends what it gained since)', prior.entityId);
    const at = conv.messages.findIndex((m) => m.id === prior.lastMessageId);
    if (at < 0) return skipped(base, 'its history changed before the last message imported; delete its entity to import it anew', prior.entityId);
    if (at === conv.messages.length - 1) return { ...base, outcome: 'unchanged', entity_id: prior.entityId, messages: 0, tokens: 0, seqs: null };
    return { from: at + 1, continued: true, prior };
  }

  /**
   * Where the conversation went before, for this run's target: its own entity, or the --into one
   * (gathered there, or made there by a run of its own). A conversation imported elsewhere is new here.
   */
  private async prior(sourceId: string): Promise<ImportSourceRow | undefined> {
    const rows = await this.deps.store.entities.importSources(this.accountId, this.source, [sourceId]);
    if (!this.into) return rows.find((r) => r.target === '');
    const id = this.into.row?.id;
    return id === undefined ? undefined : rows.find((r) => r.entityId === id);
  }

  /** A conversation not imported before: its own entity, or onto the --into one. */
  private fresh(base: Base, r: Ready): Promise<ImportedConversation> {
    if (!this.into) return this.create(base, r, r.conv.title);
    if (this.into.row) return this.append(base, this.into.row.id, r, 'appended');
    return this.create(base, r, this.into.name);
  }

  /** The messages from `from` on, shaped for the transcript and counted (`keep`: the counts are kept for the write that follows). */
  private async ready(conv: SourceConversation, from: number, continued: boolean, keep = false): Promise<Ready> {
    const picked = conv.messages.slice(from);
    const startedAt = (continued ? picked[0].createdAt : conv.createdAt ?? picked[0].createdAt) ?? this.deps.clock.iso();
    const messages = shapeTranscript(picked, { source: this.source, title: conv.title, startedAt, marker: this.into ? 'always' : 'needed', continued });
    const key = `${conv.id}\0${from}`;
    const tokens = this.counted.get(key) ?? (await countEach(this.tok, messages.map((m) => m.content)));
    if (keep) this.counted.set(key, tokens);
    else this.counted.delete(key);
    const source: ImportSourceRow = {
      accountId: this.accountId,
      source: this.source,
      sourceId: conv.id,
      target: '',
      entityId: '',
      lastMessageId: conv.messages[conv.messages.length - 1].id,
      sourceMessages: conv.messages.length,
      importedAt: this.deps.clock.iso(),
    };
    return { conv, messages, tokens, source };
  }

  private async create(base: Base, r: Ready, title: string): Promise<ImportedConversation> {
    const { deps } = this;
    const id = deps.newId();
    const msgs = rowsOf(r, 1);
    const total = sum(r.tokens);
    const name = await this.names.take([...(title.trim() || 'Untitled')].slice(0, ENTITY_NAME_MAX).join(''));
    const window: Pick<ImportedWindow, 'insertBlocks' | 'tokens' | 'blocks' | 'rotation'> = this.plan.dryRun
      ? { insertBlocks: [], tokens: 0, blocks: 0 }
      : await windowAfterImport(deps, this.tok, { ...this.windowBase(id, ENTITY_MODEL, deps.limits.windowBudget, { text: '', tokens: 0 }), existing: [], added: msgs, timeOf: async (seq) => msgs[seq - 1].createdAt });
    const row: EntityRow = {
      id,
      accountId: this.accountId,
      name,
      instructions: '',
      instructionsTokens: 0,
      model: ENTITY_MODEL,
      state: 'none',
      budgetTokens: deps.limits.windowBudget,
      capTokens: deps.limits.transcriptCap,
      transcriptMessages: msgs.length,
      transcriptTokens: total,
      windowTokens: window.tokens,
      windowBlocks: window.blocks,
      recall: recallCode(DEFAULT_RECALL_MODE),
      createdAt: r.conv.createdAt ?? msgs[0].createdAt,
      updatedAt: deps.clock.iso(),
    };
    const done = { ...base, outcome: 'created' as const, entity_id: id, messages: msgs.length, tokens: total, seqs: [1, msgs.length] as [number, number] };
    if (this.plan.dryRun) return this.planned(done, row);
    await deps.store.entities.importChat({ create: { entity: row, messages: msgs, blocks: window.insertBlocks, keepIds: false }, source: this.sourceRow(r, id), rotation: window.rotation });
    if (this.into) this.into = { row, name: this.into.name, lease: await this.lease(row) };
    this.keep(row);
    return done;
  }

  private async append(base: Base, entityId: string, r: Ready, outcome: 'appended' | 'updated'): Promise<ImportedConversation> {
    const { store } = this.deps;
    const own = this.into?.row?.id === entityId ? this.into.lease : undefined;
    const lease = own ?? (this.plan.dryRun ? undefined : await this.lease(await this.named(entityId)));
    try {
      const row = this.rows.get(entityId) ?? (await store.entities.get(this.accountId, entityId));
      if (!row) throw gone(entityId);
      if (row.transcriptTokens >= row.capTokens) return skipped(base, `entity ${JSON.stringify(row.name)} is read-only: its transcript reached the cap`, entityId);
      const msgs = rowsOf(r, row.transcriptMessages + 1);
      const total = sum(r.tokens);
      const done = { ...base, outcome, entity_id: entityId, messages: msgs.length, tokens: total, seqs: [msgs[0].seq, msgs[msgs.length - 1].seq] as [number, number] };
      const next = { ...row, transcriptMessages: row.transcriptMessages + msgs.length, transcriptTokens: row.transcriptTokens + total, updatedAt: this.deps.clock.iso() };
      if (!lease) return this.planned(done, next);
      await this.write(row, next, msgs, r, lease);
      return done;
    } finally {
      if (!own) await lease?.release();
    }
  }

  private async write(row: EntityRow, next: EntityRow, msgs: MessageRow[], r: Ready, lease: HeldLease): Promise<void> {
    const { store } = this.deps;
    const first = msgs[0].seq;
    const timeOf = async (seq: number) => (seq >= first ? msgs[seq - first].createdAt : (await store.entities.messagesAt(row.id, [seq]))[0]?.createdAt ?? row.createdAt);
    const existing = await store.entities.window(row.id);
    const memory = this.plan.summarize ? await pinnedMemory(this.deps, row.id) : undefined;
    const head = { text: row.instructions, tokens: row.instructionsTokens };
    const w = await windowAfterImport(this.deps, this.tok, { ...this.windowBase(row.id, row.model, row.budgetTokens, head), memory, existing, added: msgs, timeOf });
    const counters = { transcriptMessages: next.transcriptMessages, transcriptTokens: next.transcriptTokens, windowTokens: w.tokens, windowBlocks: w.blocks, updatedAt: next.updatedAt };
    const append = { entityId: row.id, messages: msgs, deleteBlockIds: w.deleteBlockIds, insertBlocks: w.insertBlocks, counters };
    await lease.write((claim) => store.entities.importChat({ append: { ...append, lease: claim }, source: this.sourceRow(r, row.id), rotation: w.rotation }), leaseTaken(row), false);
    this.keep({ ...next, ...counters });
  }

  /** The conversation's source row, for the entity it went to: an --into entity is its target. */
  private sourceRow(r: Ready, entityId: string): ImportSourceRow {
    return { ...r.source, entityId, target: this.into ? entityId : '' };
  }

  private windowBase(entityId: string, model: string, budget: number, instructions: { text: string; tokens: number }) {
    return { entityId, model, budget, instructions, source: this.source, summarize: this.plan.summarize, signal: this.signal, fold: this.foldOf(entityId) };
  }

  /** This run's fold of the entity's window: one rotation an entity, whatever number of its conversations fold. */
  private foldOf(entityId: string): ImportFold {
    let f = this.folds.get(entityId);
    if (!f) this.folds.set(entityId, (f = new ImportFold(this.deps, entityId)));
    return f;
  }

  /** A dry run keeps what it would have made, so later conversations plan on top of it. */
  private planned(done: ImportedConversation, row: EntityRow): ImportedConversation {
    if (this.into && !this.into.row) this.into = { row, name: this.into.name };
    this.keep(row);
    return { ...done, outcome: 'planned' };
  }

  /**
   * Keeps the row the report shows (the first IMPORT_REPORT_ROWS entities) and the --into one,
   * which later conversations build on; the others are only counted, so memory stays bounded.
   */
  private keep(row: EntityRow): void {
    if (this.rows.has(row.id) || this.rows.size < IMPORT_REPORT_ROWS || row.id === this.into?.row?.id) this.rows.set(row.id, row);
    else this.omitted++;
  }

  /** The entity a conversation goes to, as this run last saw it, for its lease's errors to name it. */
  private async named(entityId: string): Promise<Pick<EntityRow, 'id' | 'name'>> {
    const row = this.rows.get(entityId) ?? (await this.deps.store.entities.get(this.accountId, entityId));
    if (!row) throw gone(entityId);
    return row;
  }

  private lease(entity: Pick<EntityRow, 'id' | 'name'>): Promise<HeldLease> {
    return takeLease(this.deps, {
      subject: entitySubject(entity.id),
      refused: () => new ConflictError(`entity ${entityLabel(entity)} is busy: a turn or another import is writing it`, { hint: 'run the import again when it is done', entityId: entity.id }),
    });
  }
}

function leaseTaken(entity: Pick<EntityRow, 'id' | 'name'>): () => ConflictError {
  return () => new ConflictError(`entity ${entityLabel(entity)}: another writer took its lease during the import`, { hint: 'run the import again: what was written is skipped', entityId: entity.id });
}

/** An entity deleted under a running import: the user never named it by this id, but nothing else is left of it. */
function gone(entityId: string): NotFoundError {
  return new NotFoundError(`entity ${entityId} was deleted during the import`, { entityId });
}

function baseOf(conv: SourceConversation): Base {
  return { source_id: conv.id, title: conv.title, branches_left_out: conv.branchesLeftOut };
}

function rowsOf(r: Ready, firstSeq: number): MessageRow[] {
  return r.messages.map((m, i) => ({ seq: firstSeq + i, role: m.role, content: m.content, tokens: r.tokens[i], createdAt: m.createdAt }));
}

function skipped(base: Base, reason: string, entityId: string | null): ImportedConversation {
  return { ...base, outcome: 'skipped', reason, entity_id: entityId, messages: 0, tokens: 0, seqs: null };
}

function sum(xs: readonly number[]): number {
  let t = 0;
  for (const x of xs) t += x;
  return t;
}

