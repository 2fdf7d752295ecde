import { type Db, Statements } from './db.js';
import type { RequestRow, UniverseMessageHit, UniverseMessageRow, UniverseRow, UniverseSearch } from '../rows.js';
import { ftsSearch } from '../search-syntax.js';

const UNIVERSE_COLS = `id, user_id AS userId, display_name AS displayName, stored_prompt AS storedPrompt,
  prompt_text AS promptText, response_format AS responseFormat, additional_instructions AS additionalInstructions,
  prompt_fingerprint AS promptFingerprint, messages, created_at AS createdAt, updated_at AS updatedAt`;
const MESSAGE_COLS = `seq, role, content, tool_calls AS toolCalls, tool_call_id AS toolCallId, tool_name AS toolName,
  tool_ok AS toolOk, created_at AS createdAt`;

/** Universes, their runtime conversations and the requestId records. */
export class UniverseRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  insert(row: UniverseRow): void {
    this.s
      .get(
        `INSERT INTO universes (id, user_id, display_name, stored_prompt, prompt_text, response_format,
           additional_instructions, prompt_fingerprint, messages, created_at, updated_at)
         VALUES (@id, @userId, @displayName, @storedPrompt, @promptText, @responseFormat,
           @additionalInstructions, @promptFingerprint, @messages, @createdAt, @updatedAt)`,
      )
      .run(row);
  }

  /** See UniverseStore.search: FTS5's bm25 over the messages of the user's universes. */
  search(q: UniverseSearch): UniverseMessageHit[] {
    const fts = ftsSearch('universe_messages_search', q.terms);
    return this.s
      .get(
        `SELECT m.universe_id AS universeId, u.display_name AS universeName, m.seq, m.role, m.content, m.created_at AS createdAt
         FROM universe_messages_search JOIN universe_messages m ON m.id = universe_messages_search.rowid JOIN universes u ON u.id = m.universe_id
         WHERE ${fts.where} AND u.user_id = @userId
           AND (@universeIds IS NULL OR m.universe_id IN (SELECT value FROM json_each(@universeIds)))
           AND (@role IS NULL OR m.role = @role) AND (@since IS NULL OR m.created_at >= @since)
         ORDER BY bm25(universe_messages_search), m.created_at DESC, m.seq DESC LIMIT @limit`,
      )
      .all({
        ...fts.params, userId: q.userId, universeIds: q.universeIds ? JSON.stringify(q.universeIds) : null,
        role: q.role ?? null, since: q.since ?? null, limit: q.limit,
      }) as UniverseMessageHit[];
  }

  get(id: string): UniverseRow | undefined {
    return this.s.get(`SELECT ${UNIVERSE_COLS} FROM universes WHERE id = ?`).get(id) as UniverseRow | undefined;
  }

  /** The user's universes named `name` (display name) or whose id starts with `idPrefix`; at most `limit`. */
  matching(userId: string, name: string, idPrefix: string | null, limit: number): UniverseRow[] {
    return this.s
      .get(
        `SELECT ${UNIVERSE_COLS} FROM universes WHERE user_id = ? AND (display_name = ? OR (? IS NOT NULL AND substr(id, 1, length(?)) = ?))
         ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
      )
      .all(userId, name, idPrefix, idPrefix, idPrefix, limit) as UniverseRow[];
  }

  list(userId: string, limit: number): UniverseRow[] {
    return this.s
      .get(`SELECT ${UNIVERSE_COLS} FROM universes WHERE user_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ?`)
      .all(userId, limit) as UniverseRow[];
  }

  messages(universeId: string): UniverseMessageRow[] {
    return this.s.get(`SELECT ${MESSAGE_COLS} FROM universe_messages WHERE universe_id = ? ORDER BY seq`).all(universeId) as UniverseMessageRow[];
  }

  append(universeId: string, m: UniverseMessageRow): void {
    this.s
      .get(
        `INSERT INTO universe_messages (universe_id, seq, role, content, tool_calls, tool_call_id, tool_name, tool_ok, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(universeId, m.seq, m.role, m.content, m.toolCalls, m.toolCallId, m.toolName, m.toolOk, m.createdAt);
  }

  /** Drops the live messages after the first `keep` (a statePointer branch). */
  truncate(universeId: string, keep: number): void {
    this.s.get(`DELETE FROM universe_messages WHERE universe_id = ? AND seq > ?`).run(universeId, keep);
  }

  touch(universeId: string, messages: number, updatedAt: string): void {
    this.s.get(`UPDATE universes SET messages = ?, updated_at = ? WHERE id = ?`).run(messages, updatedAt, universeId);
  }

  request(userId: string, requestId: string): RequestRow | undefined {
    return this.s
      .get(
        `SELECT user_id AS userId, request_id AS requestId, universe_id AS universeId, status, user_seq AS userSeq, response
         FROM universe_requests WHERE user_id = ? AND request_id = ?`,
      )
      .get(userId, requestId) as RequestRow | undefined;
  }

  saveRequest(row: RequestRow, now: string): void {
    this.s
      .get(
        `INSERT INTO universe_requests (user_id, request_id, universe_id, status, user_seq, response, created_at, updated_at)
         VALUES (@userId, @requestId, @universeId, @status, @userSeq, @response, @now, @now)
         ON CONFLICT (user_id, request_id) DO UPDATE SET universe_id = excluded.universe_id, status = excluded.status,
           user_seq = excluded.user_seq, response = excluded.response, updated_at = excluded.updated_at`,
      )
      .run({ ...row, now });
  }
}
