import { type Db, Statements } from './db.js';
import type { BlockRow, EntityRow, MessageHit, MessageRow, MessageSearch, RankedSearch, TermMatch, TermMatchQuery } from '../rows.js';
import { ftsAny, ftsForms, ftsSearch } from '../search-syntax.js';
import { prefixEnd } from '../prefix-range.js';

const ENTITY_COLS = `id, account_id AS accountId, name, instructions, instructions_tokens AS instructionsTokens, model, state,
  budget_tokens AS budgetTokens, cap_tokens AS capTokens,
  transcript_messages AS transcriptMessages, transcript_tokens AS transcriptTokens,
  window_tokens AS windowTokens, window_blocks AS windowBlocks, recall_mode AS recall, recall_tokens AS recallTokens,
  memory_tool AS memoryTool, created_at AS createdAt, updated_at AS updatedAt`;

const BLOCK_COLS = `id, position, kind, role, content, tokens, covers_from AS coversFrom, covers_to AS coversTo`;

/** Entities, their transcripts and their windows. */
export class EntityRepo {
  private readonly stmts: Statements;
  constructor(db: Db) {
    this.stmts = new Statements(db);
  }

  private s(sql: string) {
    return this.stmts.get(sql);
  }

  insert(row: EntityRow): void {
    this.s(
      `INSERT INTO entities (id, account_id, name, instructions, instructions_tokens, model, state, budget_tokens, cap_tokens,
         transcript_messages, transcript_tokens, window_tokens, window_blocks, recall_mode, recall_tokens, memory_tool, created_at, updated_at)
       VALUES (@id, @accountId, @name, @instructions, @instructionsTokens, @model, @state, @budgetTokens, @capTokens,
         @transcriptMessages, @transcriptTokens, @windowTokens, @windowBlocks, @recall, @recallTokens, @memoryTool, @createdAt, @updatedAt)`,
    ).run({ ...row, recall: row.recall ?? 0, recallTokens: row.recallTokens ?? null, memoryTool: row.memoryTool ?? 0 });
  }

  get(accountId: string, id: string): EntityRow | undefined {
    return this.s(`SELECT ${ENTITY_COLS} FROM entities WHERE id = ? AND account_id = ?`).get(id, accountId) as
      | EntityRow
      | undefined;
  }

  exists(id: string): boolean {
    return this.s(`SELECT 1 FROM entities WHERE id = ?`).get(id) !== undefined;
  }

  /** Whether any window block (of any entity) has this id: block ids are global. */
  blockExists(id: string): boolean {
    return this.s(`SELECT 1 FROM blocks WHERE id = ?`).get(id) !== undefined;
  }

  /** Most recently active first, a page at a time. */
  list(accountId: string, limit: number, offset = 0): EntityRow[] {
    return this.s(
      `SELECT ${ENTITY_COLS} FROM entities WHERE account_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?`,
    ).all(accountId, limit, offset) as EntityRow[];
  }

  /**
   * The account's entities named `name`, or whose id starts with `idPrefix` (lowercase: ids are
   * lowercase hex and dashes, all below "g", so the range [prefix, prefix + "g") holds exactly
   * the ids that start with it, through the primary key); at most `limit`.
   */
  matching(accountId: string, name: string, idPrefix: string | null, limit: number): EntityRow[] {
    return this.s(
      `SELECT ${ENTITY_COLS} FROM entities WHERE account_id = ? AND (name = ? OR (? IS NOT NULL AND id >= ? AND id < ?))
       ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
    ).all(accountId, name, idPrefix, idPrefix, idPrefix === null ? null : `${idPrefix}g`, limit) as EntityRow[];
  }

  /**
   * See EntityStore.namesLike: the name, and the prefix as a range, each a search of the
   * (account_id, name) index (joined by OR, SQLite would scan all the account's names instead).
   */
  namesLike(accountId: string, name: string, prefix: string): string[] {
    const end = prefixEnd(prefix);
    const range = end === null ? 'name >= ?' : 'name >= ? AND name < ?';
    return this.s(
      `SELECT name FROM entities WHERE account_id = ? AND name = ?
       UNION ALL SELECT name FROM entities WHERE account_id = ? AND ${range} AND name <> ?`,
    ).pluck().all(accountId, name, accountId, prefix, ...(end === null ? [] : [end]), name) as string[];
  }

  delete(accountId: string, id: string): boolean {
    return this.s(`DELETE FROM entities WHERE id = ? AND account_id = ?`).run(id, accountId).changes > 0;
  }

  messages(entityId: string, after: number, limit: number): MessageRow[] {
    return this.s(
      `SELECT seq, role, content, tokens, created_at AS createdAt FROM messages
       WHERE entity_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ).all(entityId, after, limit) as MessageRow[];
  }

  /** See EntityStore.search: FTS5's bm25 over the messages, filtered to the account (and the entities, role and time given). */
  search(q: MessageSearch): MessageHit[] {
    const fts = ftsSearch('messages_search', q.terms);
    return this.ranked('messages_search', fts.where, '', { ...fts.params, ...filterParams(q) });
  }

  /** See EntityStore.searchAny: bm25 over the porter index, any word, filtered as search is. */
  searchAny(q: RankedSearch): MessageHit[] {
    return this.ranked('messages_ranked', 'messages_ranked MATCH @match', ', -bm25(messages_ranked) AS score', { match: ftsAny(q.words), ...filterParams(q) });
  }

  /** Hits of one FTS5 index (`where` matches it), most relevant first, newest first among equals, filtered by filterParams. */
  private ranked(index: string, where: string, extra: string, params: Record<string, unknown>): MessageHit[] {
    return this.s(
      `SELECT m.entity_id AS entityId, e.name AS entityName, m.seq, m.role, m.content, m.tokens, m.created_at AS createdAt${extra}
       FROM ${index} JOIN messages m ON m.id = ${index}.rowid JOIN entities e ON e.id = m.entity_id
       WHERE ${where} AND e.account_id = @accountId
         AND (@entityIds IS NULL OR m.entity_id IN (SELECT value FROM json_each(@entityIds)))
         AND (@role IS NULL OR m.role = @role) AND (@since IS NULL OR m.created_at >= @since)
         AND (@beforeSeq IS NULL OR m.seq < @beforeSeq)
       ORDER BY bm25(${index}), m.created_at DESC, m.seq DESC LIMIT @limit`,
    ).all(params) as MessageHit[];
  }

  /**
   * See EntityStore.termMatches: the porter index's matches, kept to the entity's messages, read
   * up to the cap in one statement a term (as PostgreSQL does). Counting each term first ran every
   * full-text query twice for the terms recall ranks by, the usual case, to spare reading the rows
   * of a term too common to rank by.
   */
  termMatches(q: TermMatchQuery): Array<TermMatch[] | null> {
    const matches = `FROM messages_ranked JOIN messages m ON m.id = messages_ranked.rowid
       WHERE messages_ranked MATCH @match AND m.entity_id = @entityId AND (@before IS NULL OR m.seq < @before)`;
    const find = this.s(`SELECT m.seq, m.tokens ${matches} LIMIT @cap`);
    return q.terms.map((forms) => {
      if (!forms.length) return [];
      const rows = find.all({ match: ftsForms(forms), entityId: q.entityId, before: q.beforeSeq ?? null, cap: q.cap }) as TermMatch[];
      return rows.length >= q.cap ? null : rows;
    });
  }

  messagesAt(entityId: string, seqs: number[]): MessageRow[] {
    return this.s(
      `SELECT seq, role, content, tokens, created_at AS createdAt FROM messages
       WHERE entity_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ).all(entityId, JSON.stringify(seqs)) as MessageRow[];
  }

  /** A page of the transcript up to `maxSeq`, as raw rows (used by export; keyset paging keeps it O(page)). */
  messagesUpTo(entityId: string, after: number, maxSeq: number, limit: number): MessageRow[] {
    return this.s(
      `SELECT seq, role, content, tokens, created_at AS createdAt FROM messages
       WHERE entity_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
    ).all(entityId, after, maxSeq, limit) as MessageRow[];
  }

  window(entityId: string): BlockRow[] {
    return this.s(`SELECT ${BLOCK_COLS} FROM blocks WHERE entity_id = ? ORDER BY position`).all(entityId) as BlockRow[];
  }

  insertMessage(entityId: string, m: MessageRow): void {
    this.s(
      `INSERT INTO messages (entity_id, seq, role, content, tokens, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(entityId, m.seq, m.role, m.content, m.tokens, m.createdAt);
  }

  insertBlock(entityId: string, b: BlockRow): void {
    this.s(
      `INSERT INTO blocks (id, entity_id, position, kind, role, content, tokens, covers_from, covers_to)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(b.id, entityId, b.position, b.kind, b.role, b.content, b.tokens, b.coversFrom, b.coversTo);
  }

  /** The whole window rewritten (a steering action), with its counters. */
  replaceWindow(entityId: string, blocks: readonly BlockRow[], windowTokens: number, updatedAt: string): void {
    this.s(`DELETE FROM blocks WHERE entity_id = ?`).run(entityId);
    for (const b of blocks) this.insertBlock(entityId, b);
    this.s(`UPDATE entities SET window_tokens = ?, window_blocks = ?, updated_at = ? WHERE id = ?`).run(windowTokens, blocks.length, updatedAt, entityId);
  }

  deleteBlocks(ids: readonly string[]): void {
    const st = this.s(`DELETE FROM blocks WHERE id = ?`);
    for (const id of ids) st.run(id);
  }

  /**
   * Rewrites the head fields given (the rest keep their values). Turns write only the counters,
   * so this never loses a turn's commit, nor a turn this. False when the entity is not there.
   */
  updateHead(
    accountId: string,
    id: string,
    h: Partial<Pick<EntityRow, 'name' | 'instructions' | 'instructionsTokens' | 'budgetTokens' | 'capTokens' | 'recall' | 'recallTokens' | 'memoryTool'>> & Pick<EntityRow, 'updatedAt'>,
  ): boolean {
    return (
      this.s(
        `UPDATE entities SET name = COALESCE(@name, name), instructions = COALESCE(@instructions, instructions),
           instructions_tokens = COALESCE(@instructionsTokens, instructions_tokens),
           budget_tokens = COALESCE(@budgetTokens, budget_tokens), cap_tokens = COALESCE(@capTokens, cap_tokens), recall_mode = COALESCE(@recall, recall_mode),
           recall_tokens = COALESCE(@recallTokens, recall_tokens), memory_tool = COALESCE(@memoryTool, memory_tool), updated_at = @updatedAt
         WHERE id = @id AND account_id = @accountId`,
      ).run({
        id,
        accountId,
        name: h.name ?? null,
        instructions: h.instructions ?? null,
        instructionsTokens: h.instructionsTokens ?? null,
        budgetTokens: h.budgetTokens ?? null,
        capTokens: h.capTokens ?? null,
        recall: h.recall ?? null,
        recallTokens: h.recallTokens ?? null,
        memoryTool: h.memoryTool ?? null,
        updatedAt: h.updatedAt,
      }).changes > 0
    );
  }

  /** Writes the counters that let reads avoid scanning the transcript or window. */
  updateCounters(
    id: string,
    c: Pick<EntityRow, 'transcriptMessages' | 'transcriptTokens' | 'windowTokens' | 'windowBlocks' | 'updatedAt'>,
  ): void {
    this.s(
      `UPDATE entities SET transcript_messages = @transcriptMessages, transcript_tokens = @transcriptTokens,
         window_tokens = @windowTokens, window_blocks = @windowBlocks, updated_at = @updatedAt WHERE id = @id`,
    ).run({ id, ...c });
  }
}

/** A search's filters as the statement binds them. */
function filterParams(q: Omit<MessageSearch, 'terms'>): Record<string, unknown> {
  return {
    accountId: q.accountId,
    entityIds: q.entityIds ? JSON.stringify(q.entityIds) : null,
    role: q.role ?? null,
    since: q.since ?? null,
    beforeSeq: q.beforeSeq ?? null,
    limit: q.limit,
  };
}
