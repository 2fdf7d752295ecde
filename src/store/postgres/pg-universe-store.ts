import type { Pool } from 'pg';
import type { RequestRow, UniverseMessageHit, UniverseMessageRow, UniverseRow, UniverseSearch, UniverseStore, UniverseWrite } from '../types.js';
import { tsQuery } from '../search-syntax.js';
import { inTransaction, type Queryable } from './pg-db.js';
import { insertLog } from './pg-log-store.js';
import { lockOwnedLease, releaseLease } from './pg-entity-store.js';

const UNIVERSE_COLS = `id, user_id AS "userId", display_name AS "displayName", stored_prompt AS "storedPrompt",
  prompt_text AS "promptText", response_format AS "responseFormat", additional_instructions AS "additionalInstructions",
  prompt_fingerprint AS "promptFingerprint", messages, created_at AS "createdAt", updated_at AS "updatedAt"`;
const MESSAGE_COLS = `seq, role, content, tool_calls AS "toolCalls", tool_call_id AS "toolCallId", tool_name AS "toolName",
  tool_ok AS "toolOk", created_at AS "createdAt"`;

/** Universes, their runtime conversations and the requestId records. */
export class PgUniverseStore implements UniverseStore {
  constructor(private readonly pool: Pool) {}

  async insert(row: UniverseRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO universes (id, user_id, display_name, stored_prompt, prompt_text, response_format,
         additional_instructions, prompt_fingerprint, messages, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [row.id, row.userId, row.displayName, row.storedPrompt, row.promptText, row.responseFormat,
        row.additionalInstructions, row.promptFingerprint, row.messages, row.createdAt, row.updatedAt],
    );
  }

  /** See UniverseStore.search: ts_rank_cd over the GIN-indexed tsvector, as for transcripts. */
  async search(q: UniverseSearch): Promise<UniverseMessageHit[]> {
    const { rows } = await this.pool.query<UniverseMessageHit>(
      `SELECT m.universe_id AS "universeId", u.display_name AS "universeName", m.seq, m.role, m.content, m.created_at AS "createdAt"
       FROM universe_messages m JOIN universes u ON u.id = m.universe_id, to_tsquery('simple', $1) query
       WHERE m.search @@ query AND u.user_id = $2
         AND ($3::text[] IS NULL OR m.universe_id = ANY($3)) AND ($4::text IS NULL OR m.role = $4)
         AND ($5::text IS NULL OR m.created_at >= $5)
       ORDER BY ts_rank_cd(m.search, query, 2) DESC, m.created_at DESC, m.seq DESC LIMIT $6`,
      [tsQuery(q.terms), q.userId, q.universeIds ?? null, q.role ?? null, q.since ?? null, q.limit],
    );
    return rows;
  }

  async get(id: string): Promise<UniverseRow | undefined> {
    return (await this.pool.query<UniverseRow>(`SELECT ${UNIVERSE_COLS} FROM universes WHERE id = $1`, [id])).rows[0];
  }

  async matching(userId: string, name: string, idPrefix: string | null, limit: number): Promise<UniverseRow[]> {
    const { rows } = await this.pool.query<UniverseRow>(
      `SELECT ${UNIVERSE_COLS} FROM universes
       WHERE user_id = $1 AND (display_name = $2 OR ($3::text IS NOT NULL AND starts_with(id, $3)))
       ORDER BY updated_at DESC, rid DESC LIMIT $4`,
      [userId, name, idPrefix, limit],
    );
    return rows;
  }

  async list(userId: string, limit: number): Promise<UniverseRow[]> {
    const { rows } = await this.pool.query<UniverseRow>(
      `SELECT ${UNIVERSE_COLS} FROM universes WHERE user_id = $1 ORDER BY updated_at DESC, rid DESC LIMIT $2`,
      [userId, limit],
    );
    return rows;
  }

  async messages(universeId: string): Promise<UniverseMessageRow[]> {
    const { rows } = await this.pool.query<UniverseMessageRow>(
      `SELECT ${MESSAGE_COLS} FROM universe_messages WHERE universe_id = $1 ORDER BY seq`,
      [universeId],
    );
    return rows;
  }

  async write(w: UniverseWrite): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      if (!(await lockOwnedLease(c, w.lease))) return false;
      if (w.truncateTo !== undefined) {
        await c.query(`DELETE FROM universe_messages WHERE universe_id = $1 AND seq > $2`, [w.universeId, w.truncateTo]);
      }
      if (w.append.length) {
        const a = w.append;
        await c.query(
          `INSERT INTO universe_messages (universe_id, seq, role, content, tool_calls, tool_call_id, tool_name, tool_ok, created_at)
           SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[])`,
          [w.universeId, a.map((m) => m.seq), a.map((m) => m.role), a.map((m) => m.content), a.map((m) => m.toolCalls),
            a.map((m) => m.toolCallId), a.map((m) => m.toolName), a.map((m) => m.toolOk), a.map((m) => m.createdAt)],
        );
      }
      await c.query(`UPDATE universes SET messages = $2, updated_at = $3 WHERE id = $1`, [w.universeId, w.touch.messages, w.touch.updatedAt]);
      if (w.log) await insertLog(c, w.log);
      if (w.request) await upsertRequest(c, w.request, w.touch.updatedAt);
      if (w.release) await releaseLease(c, w.lease);
      return true;
    });
  }

  async request(userId: string, requestId: string): Promise<RequestRow | undefined> {
    const { rows } = await this.pool.query<RequestRow>(
      `SELECT user_id AS "userId", request_id AS "requestId", universe_id AS "universeId", status, user_seq AS "userSeq", response
       FROM universe_requests WHERE user_id = $1 AND request_id = $2`,
      [userId, requestId],
    );
    return rows[0];
  }

  async saveRequest(row: RequestRow, now: string): Promise<void> {
    await upsertRequest(this.pool, row, now);
  }
}

async function upsertRequest(q: Queryable, row: RequestRow, now: string): Promise<void> {
  await q.query(
    `INSERT INTO universe_requests (user_id, request_id, universe_id, status, user_seq, response, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (user_id, request_id) DO UPDATE SET universe_id = excluded.universe_id, status = excluded.status,
       user_seq = excluded.user_seq, response = excluded.response, updated_at = excluded.updated_at`,
    [row.userId, row.requestId, row.universeId, row.status, row.userSeq, row.response, now],
  );
}
