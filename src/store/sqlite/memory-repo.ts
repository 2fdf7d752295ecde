import { type Db, Statements } from './db.js';
import type { MemoryHistoryRow, MemoryRow, MemoryWrite, MemoryWriteResult } from '../rows.js';
import { memoryOutcome } from '../memory-outcome.js';

const BLOCK_COLS = `label, text, tokens, updated_at AS updatedAt`;
const HISTORY_COLS = `label, text_before AS "before", text_after AS "after", source, created_at AS createdAt`;

/** Pinned memory: an entity's blocks and their history. */
export class MemoryRepo {
  private readonly stmts: Statements;
  constructor(db: Db) {
    this.stmts = new Statements(db);
  }

  private s(sql: string) {
    return this.stmts.get(sql);
  }

  list(entityId: string): MemoryRow[] {
    return this.s(`SELECT ${BLOCK_COLS} FROM memory_blocks WHERE entity_id = ? ORDER BY label`).all(entityId) as MemoryRow[];
  }

  history(entityId: string): MemoryHistoryRow[] {
    return this.s(`SELECT ${HISTORY_COLS} FROM memory_history WHERE entity_id = ? ORDER BY id`).all(entityId) as MemoryHistoryRow[];
  }

  /** One block set or removed with its history row; call it inside a transaction. */
  write(w: MemoryWrite): MemoryWriteResult {
    if (this.s(`SELECT 1 FROM entities WHERE id = ?`).get(w.entityId) === undefined) return { kind: 'missing' };
    const outcome = memoryOutcome(this.list(w.entityId), w);
    if (outcome.kind !== 'changed') return outcome;
    if (w.text === null) this.s(`DELETE FROM memory_blocks WHERE entity_id = ? AND label = ?`).run(w.entityId, w.label);
    else this.upsert(w.entityId, outcome.after!);
    this.insertHistory(w.entityId, { label: w.label, before: outcome.before?.text ?? null, after: w.text, source: w.source, createdAt: w.at });
    return outcome;
  }

  /** Writes a block as it is (an import); call it inside a transaction. */
  upsert(entityId: string, b: MemoryRow): void {
    this.s(
      `INSERT INTO memory_blocks (entity_id, label, text, tokens, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (entity_id, label) DO UPDATE SET text = excluded.text, tokens = excluded.tokens, updated_at = excluded.updated_at`,
    ).run(entityId, b.label, b.text, b.tokens, b.updatedAt);
  }

  insertHistory(entityId: string, h: MemoryHistoryRow): void {
    this.s(
      `INSERT INTO memory_history (entity_id, label, text_before, text_after, source, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(entityId, h.label, h.before, h.after, h.source, h.createdAt);
  }
}
