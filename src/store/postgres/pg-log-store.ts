import type { Pool } from 'pg';
import type { LogFilter, LogHit, LogRow, LogSearch, LogStore } from '../types.js';
import { tsQuery } from '../search-syntax.js';
import { type Queryable, inTransaction } from './pg-db.js';

const COLS = `id, kind, owner_user_id AS "ownerUserId", user_id AS "userId", game_id AS "gameId", universe_id AS "universeId",
  request_id AS "requestId", model, provider_model AS "providerModel", status, error, input_tokens AS "inputTokens",
  output_tokens AS "outputTokens", cost_usd AS "costUsd", total_ms AS "totalMs", provider_ms AS "providerMs",
  created_at AS "createdAt", request_summary AS "requestSummary", response_summary AS "responseSummary"`;

const FILTERS: ReadonlyArray<[keyof LogFilter, string]> = [
  ['kind', 'kind'],
  ['gameId', 'game_id'],
  ['userId', 'user_id'],
  ['requestId', 'request_id'],
];

/** One record per text or image generation. */
export class PgLogStore implements LogStore {
  constructor(private readonly pool: Pool) {}

  async insert(row: LogRow): Promise<void> {
    await insertLog(this.pool, row);
  }

  /** See LogStore.search: ts_rank_cd over each record's input and reply. */
  async search(q: LogSearch): Promise<LogHit[]> {
    const { rows } = await this.pool.query<LogHit>(
      `SELECT l.id, l.universe_id AS "universeId", l.model, l.created_at AS "createdAt",
         coalesce(l.request_summary::jsonb ->> 'userInput', '') || ' ' || coalesce(l.response_summary::jsonb ->> 'assistantRaw', '') AS text
       FROM generation_logs l, to_tsquery('simple', $1) query
       WHERE l.search @@ query AND l.owner_user_id = $2 AND ($3::text IS NULL OR l.created_at >= $3)
       ORDER BY ts_rank_cd(l.search, query, 2) DESC, l.created_at DESC LIMIT $4`,
      [tsQuery(q.terms), q.ownerUserId, q.since ?? null, q.limit],
    );
    return rows;
  }

  async idsWithPrefix(ownerUserId: string, prefix: string, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM generation_logs WHERE owner_user_id = $1 AND starts_with(id, $2) LIMIT $3`,
      [ownerUserId, prefix, limit],
    );
    return rows.map((r) => r.id);
  }

  async get(ownerUserId: string, id: string): Promise<LogRow | undefined> {
    const { rows } = await this.pool.query<LogRow>(`SELECT ${COLS} FROM generation_logs WHERE id = $1 AND owner_user_id = $2`, [id, ownerUserId]);
    return rows[0];
  }

  /** Newest first, with the total for paging; both from one snapshot so they agree. */
  async list(f: LogFilter, limit: number, offset: number): Promise<{ rows: LogRow[]; total: number }> {
    const where = ['owner_user_id = $1'];
    const params: unknown[] = [f.ownerUserId];
    for (const [field, column] of FILTERS) {
      if (f[field] === undefined) continue;
      params.push(f[field]);
      where.push(`${column} = $${params.length}`);
    }
    const clause = where.join(' AND ');
    return inTransaction(
      this.pool,
      async (c) => {
        const total = (await c.query<{ n: number }>(`SELECT count(*) AS n FROM generation_logs WHERE ${clause}`, params)).rows[0].n;
        const { rows } = await c.query<LogRow>(
          `SELECT ${COLS} FROM generation_logs WHERE ${clause} ORDER BY created_at DESC, rid DESC
           LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, limit, offset],
        );
        return { rows, total };
      },
      'snapshot',
    );
  }
}

/** Inserts one record, on the pool or inside a caller's transaction. */
export async function insertLog(q: Queryable, row: LogRow): Promise<void> {
  await q.query(
    `INSERT INTO generation_logs (id, kind, owner_user_id, user_id, game_id, universe_id, request_id, model,
       provider_model, status, error, input_tokens, output_tokens, cost_usd, total_ms, provider_ms, created_at,
       request_summary, response_summary)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [row.id, row.kind, row.ownerUserId, row.userId, row.gameId, row.universeId, row.requestId, row.model,
      row.providerModel, row.status, row.error, row.inputTokens, row.outputTokens, row.costUsd, row.totalMs,
      row.providerMs, row.createdAt, row.requestSummary, row.responseSummary],
  );
}
