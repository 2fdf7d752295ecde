import { type Db, Statements } from './db.js';
import type { LogFilter, LogHit, LogRow, LogSearch } from '../rows.js';
import { ftsSearch } from '../search-syntax.js';

const COLS = `id, kind, owner_user_id AS ownerUserId, user_id AS userId, game_id AS gameId, universe_id AS universeId,
  request_id AS requestId, model, provider_model AS providerModel, status, error, input_tokens AS inputTokens,
  output_tokens AS outputTokens, cost_usd AS costUsd, total_ms AS totalMs, provider_ms AS providerMs,
  created_at AS createdAt, request_summary AS requestSummary, response_summary AS responseSummary`;

/** One record per text or image generation. */
export class LogRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  insert(row: LogRow): void {
    this.s
      .get(
        `INSERT INTO generation_logs (id, kind, owner_user_id, user_id, game_id, universe_id, request_id, model,
           provider_model, status, error, input_tokens, output_tokens, cost_usd, total_ms, provider_ms, created_at,
           request_summary, response_summary)
         VALUES (@id, @kind, @ownerUserId, @userId, @gameId, @universeId, @requestId, @model, @providerModel, @status,
           @error, @inputTokens, @outputTokens, @costUsd, @totalMs, @providerMs, @createdAt, @requestSummary, @responseSummary)`,
      )
      .run(row);
  }

  /** Ids of the owner's records that start with `prefix`; at most `limit`. */
  idsWithPrefix(ownerUserId: string, prefix: string, limit: number): string[] {
    const rows = this.s
      .get(`SELECT id FROM generation_logs WHERE owner_user_id = ? AND substr(id, 1, length(?)) = ? LIMIT ?`)
      .all(ownerUserId, prefix, prefix, limit) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  get(ownerUserId: string, id: string): LogRow | undefined {
    return this.s.get(`SELECT ${COLS} FROM generation_logs WHERE id = ? AND owner_user_id = ?`).get(id, ownerUserId) as LogRow | undefined;
  }

  /** See LogStore.search: FTS5's bm25 over each record's input and reply. */
  search(q: LogSearch): LogHit[] {
    const fts = ftsSearch('generation_logs_search', q.terms);
    return this.s
      .get(
        `SELECT l.id, l.universe_id AS universeId, l.model, l.created_at AS createdAt,
           coalesce(json_extract(l.request_summary, '$.userInput'), '') || ' ' || coalesce(json_extract(l.response_summary, '$.assistantRaw'), '') AS text
         FROM generation_logs_search JOIN generation_logs l ON l.rowid = generation_logs_search.rowid
         WHERE ${fts.where} AND l.owner_user_id = @owner AND (@since IS NULL OR l.created_at >= @since)
         ORDER BY bm25(generation_logs_search), l.created_at DESC LIMIT @limit`,
      )
      .all({ ...fts.params, owner: q.ownerUserId, since: q.since ?? null, limit: q.limit }) as LogHit[];
  }

  /** Newest first, with the total for paging. */
  list(f: LogFilter, limit: number, offset: number): { rows: LogRow[]; total: number } {
    const where = ['owner_user_id = @ownerUserId'];
    if (f.kind !== undefined) where.push('kind = @kind');
    if (f.gameId !== undefined) where.push('game_id = @gameId');
    if (f.userId !== undefined) where.push('user_id = @userId');
    if (f.requestId !== undefined) where.push('request_id = @requestId');
    const clause = where.join(' AND ');
    const params = { ...f, limit, offset };
    const total = (this.s.get(`SELECT count(*) AS n FROM generation_logs WHERE ${clause}`).get(params) as { n: number }).n;
    const rows = this.s
      .get(`SELECT ${COLS} FROM generation_logs WHERE ${clause} ORDER BY created_at DESC, rowid DESC LIMIT @limit OFFSET @offset`)
      .all(params) as LogRow[];
    return { rows, total };
  }
}
