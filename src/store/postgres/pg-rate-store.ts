import type { Pool } from 'pg';
import type { RateGate, RateState, RateStore } from '../types.js';

/**
 * The database's clock in epoch milliseconds, so every replica reads one clock: the time as it is
 * read (clock_timestamp), not the transaction's start (now()). An upsert that waited for another
 * replica's lock on the row then reads a time after that replica's, so admissions in lock order
 * see time go forward (with now(), a statement that started first but locked second counted from
 * an earlier time, and two admissions said the same `remaining`).
 */
const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;

/** A request's cost may land on the period's edge (7 requests of 60000/7 ms): within this, it fits. */
const EDGE_MS = 0.001;

const STATE = `${NOW_MS} AS now, request_tat AS "requestTat", token_tat AS "tokenTat"`;

/**
 * Rate state per key (see RateStore). The admission is one upsert whose update applies only when
 * the request fits: ON CONFLICT locks the row and evaluates the condition on its latest version,
 * so replicas admitting the same key at once take turns and never admit past the limit together.
 */
export class PgRateStore implements RateStore {
  constructor(private readonly pool: Pool) {}

  async admit(keyId: string, g: RateGate): Promise<RateState & { admitted: boolean }> {
    const { rows } = await this.pool.query<RateState>(
      `INSERT INTO rate_state AS r (key_id, request_tat, token_tat) VALUES ($1, ${NOW_MS} + $2::double precision, ${NOW_MS})
       ON CONFLICT (key_id) DO UPDATE SET request_tat = greatest(r.request_tat, ${NOW_MS}) + $2::double precision
       WHERE greatest(r.request_tat, ${NOW_MS}) + $2::double precision - ${NOW_MS} <= $3::double precision + ${EDGE_MS}
         AND (NOT $4::boolean OR r.token_tat - ${NOW_MS} < $3::double precision)
       RETURNING ${STATE}`,
      [keyId, g.requestMs, g.periodMs, g.tokens],
    );
    return rows[0] ? { ...rows[0], admitted: true } : { ...(await this.state(keyId)), admitted: false };
  }

  /**
   * One statement: the row is locked and the clock read once (after any wait for the lock), so a
   * refusal reports the state it was refused on, not one read a moment later.
   */
  async reserve(keyId: string, tokenMs: number, periodMs: number): Promise<RateState & { admitted: boolean }> {
    const { rows } = await this.pool.query<RateState & { admitted: boolean }>(
      `WITH cur AS (SELECT key_id, request_tat, token_tat, ${NOW_MS} AS now FROM rate_state WHERE key_id = $1 FOR UPDATE),
       upd AS (UPDATE rate_state r SET token_tat = greatest(cur.token_tat, cur.now) + $2::double precision
               FROM cur WHERE r.key_id = cur.key_id AND cur.token_tat - cur.now < $3::double precision
               RETURNING r.token_tat)
       SELECT cur.now, cur.request_tat AS "requestTat", coalesce(upd.token_tat, cur.token_tat) AS "tokenTat", upd.token_tat IS NOT NULL AS admitted
       FROM cur LEFT JOIN upd ON true`,
      [keyId, tokenMs, periodMs],
    );
    return rows[0] ?? { ...(await this.state(keyId)), admitted: false };
  }

  async spend(keyId: string, tokenMs: number): Promise<void> {
    await this.pool.query(
      `UPDATE rate_state SET token_tat = CASE WHEN $2::double precision >= 0 THEN greatest(token_tat, ${NOW_MS}) + $2::double precision
         ELSE greatest(token_tat + $2::double precision, ${NOW_MS}) END
       WHERE key_id = $1`,
      [keyId, tokenMs],
    );
  }

  private async state(keyId: string): Promise<RateState> {
    return (await this.pool.query<RateState>(`SELECT ${STATE} FROM rate_state WHERE key_id = $1`, [keyId])).rows[0]!;
  }
}
