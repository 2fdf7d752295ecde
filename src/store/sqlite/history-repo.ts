import { type Db, Statements } from './db.js';
import type { EntityHistory, PromptHeadRow, RotationRow, TurnWindowRow, TurnWindowWrite } from '../history-rows.js';

const ROTATION_COLS = `entity_id AS entityId, n, id, created_at AS createdAt, trigger, seq, from_seq AS fromSeq, to_seq AS toSeq,
  summary_id AS summaryId, covers_from AS coversFrom, summary_text AS summaryText, summary_tokens AS summaryTokens,
  provider, model, prompt_tokens AS promptTokens, cached_tokens AS cachedTokens, completion_tokens AS completionTokens,
  blocks_before AS blocksBefore, blocks_after AS blocksAfter, folded_ids AS foldedIds, undone`;

type RawRotation = Omit<RotationRow, 'undone'> & { undone: number };

const rotation = (r: RawRotation): RotationRow => ({ ...r, undone: r.undone === 1 });

/** An entity's window history: rotations, prompt heads and per-turn window records. */
export class HistoryRepo {
  private readonly stmts: Statements;
  constructor(db: Db) {
    this.stmts = new Statements(db);
  }

  private s(sql: string) {
    return this.stmts.get(sql);
  }

  rotations(entityId: string): RotationRow[] {
    return (this.s(`SELECT ${ROTATION_COLS} FROM rotations WHERE entity_id = ? ORDER BY n`).all(entityId) as RawRotation[]).map(rotation);
  }

  rotationsNumbered(entityId: string, ns: number[]): RotationRow[] {
    return (this.s(`SELECT ${ROTATION_COLS} FROM rotations WHERE entity_id = ? AND n IN (SELECT value FROM json_each(?)) ORDER BY n`)
      .all(entityId, JSON.stringify(ns)) as RawRotation[]).map(rotation);
  }

  rotationsFolding(entityId: string, from: number, to: number): RotationRow[] {
    return (this.s(`SELECT ${ROTATION_COLS} FROM rotations WHERE entity_id = ? AND to_seq >= ? AND from_seq <= ? AND trigger <> 'resummarize' ORDER BY n`)
      .all(entityId, from, to) as RawRotation[]).map(rotation);
  }

  summaryWriter(entityId: string, blockId: string, text: string): number | undefined {
    const row = this.s(`SELECT n FROM rotations WHERE entity_id = ? AND summary_id = ? AND summary_text = ? ORDER BY n DESC LIMIT 1`)
      .get(entityId, blockId, text) as { n: number } | undefined;
    return row?.n;
  }

  lastRotation(entityId: string): number {
    return (this.s(`SELECT coalesce(max(n), 0) AS n FROM rotations WHERE entity_id = ?`).get(entityId) as { n: number }).n;
  }

  turnWindow(entityId: string, seq: number): (TurnWindowRow & { head: string }) | undefined {
    return this.s(
      `SELECT t.seq, t.head_id AS headId, t.blocks, t.tail, h.messages AS head FROM prompt_heads h JOIN turn_windows t ON t.head_id = h.id
       WHERE h.entity_id = ? AND t.seq = ?`,
    ).get(entityId, seq) as (TurnWindowRow & { head: string }) | undefined;
  }

  seqAt(entityId: string, iso: string): number | undefined {
    const row = this.s(`SELECT max(seq) AS seq FROM messages WHERE entity_id = ? AND role = 'user' AND created_at <= ?`).get(entityId, iso) as { seq: number | null };
    return row.seq ?? undefined;
  }

  history(entityId: string): EntityHistory {
    return {
      rotations: this.rotations(entityId),
      heads: this.s(`SELECT id, sha256, messages FROM prompt_heads WHERE entity_id = ? ORDER BY id`).all(entityId) as PromptHeadRow[],
      turns: this.s(
        `SELECT t.seq, t.head_id AS headId, t.blocks, t.tail FROM prompt_heads h JOIN turn_windows t ON t.head_id = h.id WHERE h.entity_id = ? ORDER BY t.seq`,
      ).all(entityId) as TurnWindowRow[],
    };
  }

  insertRotation(r: RotationRow): void {
    this.s(
      `INSERT INTO rotations (entity_id, n, id, created_at, trigger, seq, from_seq, to_seq, summary_id, covers_from, summary_text,
         summary_tokens, provider, model, prompt_tokens, cached_tokens, completion_tokens, blocks_before, blocks_after, folded_ids, undone)
       VALUES (@entityId, @n, @id, @createdAt, @trigger, @seq, @fromSeq, @toSeq, @summaryId, @coversFrom, @summaryText,
         @summaryTokens, @provider, @model, @promptTokens, @cachedTokens, @completionTokens, @blocksBefore, @blocksAfter, @foldedIds, @undone)`,
    ).run({ ...r, undone: r.undone ? 1 : 0 });
  }

  /** A rotation record written anew: an import's fold, rewritten as each conversation folds in. */
  replaceRotation(r: RotationRow): void {
    this.s(`DELETE FROM rotations WHERE entity_id = ? AND n = ?`).run(r.entityId, r.n);
    this.insertRotation(r);
  }

  markUndone(entityId: string, n: number): void {
    this.s(`UPDATE rotations SET undone = 1 WHERE entity_id = ? AND n = ?`).run(entityId, n);
  }

  /** The head's id, stored now if this entity has not sent it before. */
  headId(entityId: string, sha256: string, messages: string): number {
    const found = this.s(`SELECT id FROM prompt_heads WHERE entity_id = ? AND sha256 = ?`).get(entityId, sha256) as { id: number } | undefined;
    if (found) return found.id;
    return Number(this.s(`INSERT INTO prompt_heads (entity_id, sha256, messages) VALUES (?, ?, ?)`).run(entityId, sha256, messages).lastInsertRowid);
  }

  insertTurnWindow(headId: number, t: Omit<TurnWindowWrite, 'head' | 'headSha256'>): void {
    this.s(`INSERT INTO turn_windows (head_id, seq, blocks, tail) VALUES (?, ?, ?, ?)`).run(headId, t.seq, t.blocks, t.tail);
  }

  /** An archive's history, its heads renumbered as this database numbers them. */
  importHistory(entityId: string, h: EntityHistory): void {
    const ids = new Map<number, number>();
    for (const head of h.heads) ids.set(head.id, this.headId(entityId, head.sha256, head.messages));
    for (const r of h.rotations) this.insertRotation({ ...r, entityId });
    for (const t of h.turns) this.insertTurnWindow(ids.get(t.headId)!, t);
  }
}
