import type { Pool } from 'pg';
import type { MemoryHistoryRow, MemoryRow, MemoryStore, MemoryWrite, MemoryWriteResult } from '../types.js';
import { memoryOutcome } from '../memory-outcome.js';
import { inTransaction, type Queryable } from './pg-db.js';

const BLOCK_COLS = `label, text, tokens, updated_at AS "updatedAt"`;
const HISTORY_COLS = `label, text_before AS "before", text_after AS "after", source, created_at AS "createdAt"`;

/** Pinned memory, shared by every replica; each write locks its entity's row. */
export class PgMemoryStore implements MemoryStore {
  constructor(private readonly pool: Pool) {}

  list(entityId: string): Promise<MemoryRow[]> {
    return listMemory(this.pool, entityId);
  }

  history(entityId: string): Promise<MemoryHistoryRow[]> {
    return memoryHistory(this.pool, entityId);
  }

  write(w: MemoryWrite): Promise<MemoryWriteResult> {
    return inTransaction(this.pool, (c) => writeMemory(c, w));
  }
}

/** Every change to the entity's memory, oldest first. */
export function memoryHistory(q: Queryable, entityId: string): Promise<MemoryHistoryRow[]> {
  return q.query<MemoryHistoryRow>(`SELECT ${HISTORY_COLS} FROM memory_history WHERE entity_id = $1 ORDER BY id`, [entityId]).then((r) => r.rows);
}

/** The entity's blocks, by label. */
export function listMemory(q: Queryable, entityId: string): Promise<MemoryRow[]> {
  return q.query<MemoryRow>(`SELECT ${BLOCK_COLS} FROM memory_blocks WHERE entity_id = $1 ORDER BY label`, [entityId]).then((r) => r.rows);
}

/**
 * One block set or removed with its history row; call it inside a transaction. The entity's row is
 * locked first, so two writers (two replicas) decide one after the other against the limits.
 */
export async function writeMemory(c: Queryable, w: MemoryWrite): Promise<MemoryWriteResult> {
  const locked = await c.query(`SELECT 1 FROM entities WHERE id = $1 FOR UPDATE`, [w.entityId]);
  if (!locked.rows.length) return { kind: 'missing' };
  const outcome = memoryOutcome(await listMemory(c, w.entityId), w);
  if (outcome.kind !== 'changed') return outcome;
  if (w.text === null) await c.query(`DELETE FROM memory_blocks WHERE entity_id = $1 AND label = $2`, [w.entityId, w.label]);
  else await upsertMemory(c, w.entityId, outcome.after!);
  await insertMemoryHistory(c, w.entityId, { label: w.label, before: outcome.before?.text ?? null, after: w.text, source: w.source, createdAt: w.at });
  return outcome;
}

/** Writes a block as it is (an import). */
export async function upsertMemory(c: Queryable, entityId: string, b: MemoryRow): Promise<void> {
  await c.query(
    `INSERT INTO memory_blocks (entity_id, label, text, tokens, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (entity_id, label) DO UPDATE SET text = excluded.text, tokens = excluded.tokens, updated_at = excluded.updated_at`,
    [entityId, b.label, b.text, b.tokens, b.updatedAt],
  );
}

export async function insertMemoryHistory(c: Queryable, entityId: string, h: MemoryHistoryRow): Promise<void> {
  await c.query(
    `INSERT INTO memory_history (entity_id, label, text_before, text_after, source, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [entityId, h.label, h.before, h.after, h.source, h.createdAt],
  );
}
