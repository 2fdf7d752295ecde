import type { Pool } from 'pg';
import { type MessageVector, type UnembeddedMessage, type VectorStore, bytesVector, vectorBytes } from '../vector-types.js';
import { inTransaction } from './pg-db.js';

/** Semantic recall's vectors in a bytea each (see VectorStore): no extension needed. */
export class PgVectorStore implements VectorStore {
  constructor(private readonly pool: Pool) {}

  async unembedded(entityId: string, model: string, limit: number): Promise<UnembeddedMessage[]> {
    const { rows } = await this.pool.query<UnembeddedMessage>(
      `SELECT m.seq::int AS seq, m.content FROM messages m
       LEFT JOIN message_vectors v ON v.entity_id = m.entity_id AND v.seq = m.seq AND v.model = $1
       WHERE m.entity_id = $2 AND v.seq IS NULL ORDER BY m.seq DESC LIMIT $3`,
      [model, entityId, limit],
    );
    return rows;
  }

  /** One statement over the arrays; a row only where its message still is. */
  async put(entityId: string, model: string, vectors: readonly MessageVector[]): Promise<void> {
    if (!vectors.length) return;
    await inTransaction(this.pool, (c) =>
      c.query(
        `INSERT INTO message_vectors (entity_id, seq, model, vector)
         SELECT m.entity_id, m.seq, $2, v.vector FROM unnest($3::bigint[], $4::bytea[]) AS v(seq, vector)
         JOIN messages m ON m.entity_id = $1 AND m.seq = v.seq
         ON CONFLICT (entity_id, seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
        [entityId, model, vectors.map((v) => v.seq), vectors.map((v) => vectorBytes(v.vector))],
      ),
    );
  }

  async vectors(entityId: string, model: string, beforeSeq: number | undefined): Promise<MessageVector[]> {
    const { rows } = await this.pool.query<{ seq: number; vector: Buffer }>(
      `SELECT seq::int AS seq, vector FROM message_vectors WHERE entity_id = $1 AND model = $2 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq`,
      [entityId, model, beforeSeq ?? null],
    );
    return rows.map((r) => ({ seq: r.seq, vector: bytesVector(r.vector) }));
  }

  async count(entityId: string, model: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM message_vectors WHERE entity_id = $1 AND model = $2`, [entityId, model]);
    return rows[0].n;
  }
}
