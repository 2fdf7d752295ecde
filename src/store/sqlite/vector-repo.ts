import { type Db, Statements } from './db.js';
import { type MessageVector, type UnembeddedMessage, bytesVector, vectorBytes } from '../vector-types.js';

/** Semantic recall's vectors (see VectorStore). */
export class VectorRepo {
  private readonly stmts: Statements;
  constructor(db: Db) {
    this.stmts = new Statements(db);
  }

  private s(sql: string) {
    return this.stmts.get(sql);
  }

  unembedded(entityId: string, model: string, limit: number): UnembeddedMessage[] {
    return this.s(
      `SELECT m.seq AS seq, m.content AS content FROM messages m
       LEFT JOIN message_vectors v ON v.entity_id = m.entity_id AND v.seq = m.seq AND v.model = ?
       WHERE m.entity_id = ? AND v.seq IS NULL ORDER BY m.seq DESC LIMIT ?`,
    ).all(model, entityId, limit) as UnembeddedMessage[];
  }

  /** A row only where its message still is; call it inside a transaction. */
  put(entityId: string, model: string, vectors: readonly MessageVector[]): void {
    const st = this.s(
      `INSERT INTO message_vectors (entity_id, seq, model, vector)
       SELECT entity_id, seq, ?, ? FROM messages WHERE entity_id = ? AND seq = ?
       ON CONFLICT (entity_id, seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
    );
    for (const v of vectors) st.run(model, vectorBytes(v.vector), entityId, v.seq);
  }

  vectors(entityId: string, model: string, beforeSeq: number | undefined): MessageVector[] {
    const rows = this.s(
      `SELECT seq, vector FROM message_vectors WHERE entity_id = ? AND model = ? AND seq < ? ORDER BY seq`,
    ).all(entityId, model, beforeSeq ?? Number.MAX_SAFE_INTEGER) as Array<{ seq: number; vector: Buffer }>;
    return rows.map((r) => ({ seq: r.seq, vector: bytesVector(r.vector) }));
  }

  count(entityId: string, model: string): number {
    return (this.s(`SELECT count(*) AS n FROM message_vectors WHERE entity_id = ? AND model = ?`).get(entityId, model) as { n: number }).n;
  }
}
