import type { BlockRow, MessageRow } from '../types.js';
import type { Queryable } from './pg-db.js';

/**
 * Rows per INSERT. A statement's rows are one round trip, but its arrays are built and serialized
 * in one synchronous stretch: a branch's 25,000 messages go in several statements (the same
 * transaction), so the event loop turns between them.
 */
const ROWS_PER_STATEMENT = 5_000;

/** The rows in statements of up to ROWS_PER_STATEMENT (a turn's two: one round trip, not one per row). */
export async function insertMessages(q: Queryable, entityId: string, ms: readonly MessageRow[]): Promise<void> {
  for (let i = 0; i < ms.length; i += ROWS_PER_STATEMENT) await insertMessageRows(q, entityId, ms.slice(i, i + ROWS_PER_STATEMENT));
}

async function insertMessageRows(q: Queryable, entityId: string, ms: readonly MessageRow[]): Promise<void> {
  await q.query(
    `INSERT INTO messages (entity_id, seq, role, content, tokens, created_at)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[])`,
    [entityId, ms.map((m) => m.seq), ms.map((m) => m.role), ms.map((m) => m.content), ms.map((m) => m.tokens),
      ms.map((m) => m.createdAt)],
  );
}

export async function insertBlocks(q: Queryable, entityId: string, bs: readonly BlockRow[]): Promise<void> {
  for (let i = 0; i < bs.length; i += ROWS_PER_STATEMENT) await insertBlockRows(q, entityId, bs.slice(i, i + ROWS_PER_STATEMENT));
}

async function insertBlockRows(q: Queryable, entityId: string, bs: readonly BlockRow[]): Promise<void> {
  await q.query(
    `INSERT INTO blocks (id, entity_id, position, kind, role, content, tokens, covers_from, covers_to)
     SELECT b.id, $1, b.position, b.kind, b.role, b.content, b.tokens, b.covers_from, b.covers_to
     FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[])
       AS b(id, position, kind, role, content, tokens, covers_from, covers_to)`,
    [entityId, bs.map((b) => b.id), bs.map((b) => b.position), bs.map((b) => b.kind), bs.map((b) => b.role),
      bs.map((b) => b.content), bs.map((b) => b.tokens), bs.map((b) => b.coversFrom), bs.map((b) => b.coversTo)],
  );
}

