import { type Db, Statements } from './db.js';
import type { RateGate, RateState } from '../rows.js';

/** The database's clock in epoch milliseconds: every process on the file reads one clock. */
const NOW_MS = `((julianday('now') - 2440587.5) * 86400000.0)`;

/** A request's cost may land on the period's edge (7 requests of 60000/7 ms): within this, it fits. */
const EDGE_MS = 0.001;

/**
 * Rate state per key (see RateStore). The admission is one upsert whose update applies only when
 * the request fits, so two processes on the file never admit past the limit between them: SQLite
 * runs one writer at a time, and the statement reads and writes the row in one step.
 */
export class RateRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  admit(keyId: string, g: RateGate): RateState & { admitted: boolean } {
    const row = this.s
      .get(
        `INSERT INTO rate_state (key_id, request_tat, token_tat) VALUES (@keyId, ${NOW_MS} + @requestMs, ${NOW_MS})
         ON CONFLICT (key_id) DO UPDATE SET request_tat = max(request_tat, excluded.token_tat) + @requestMs
         WHERE max(request_tat, excluded.token_tat) + @requestMs - excluded.token_tat <= @periodMs + ${EDGE_MS}
           AND (@tokens = 0 OR token_tat - excluded.token_tat < @periodMs)
         RETURNING ${NOW_MS} AS now, request_tat AS requestTat, token_tat AS tokenTat`,
      )
      .get({ keyId, requestMs: g.requestMs, periodMs: g.periodMs, tokens: g.tokens ? 1 : 0 }) as RateState | undefined;
    return row ? { ...row, admitted: true } : { ...this.state(keyId), admitted: false };
  }

  /** Reserves `tokenMs` of the token time when some of the allowance is left; the state after, or refused and unchanged. */
  reserve(keyId: string, tokenMs: number, periodMs: number): RateState & { admitted: boolean } {
    const row = this.s
      .get(
        `UPDATE rate_state SET token_tat = max(token_tat, ${NOW_MS}) + @tokenMs
         WHERE key_id = @keyId AND token_tat - ${NOW_MS} < @periodMs
         RETURNING ${NOW_MS} AS now, request_tat AS requestTat, token_tat AS tokenTat`,
      )
      .get({ keyId, tokenMs, periodMs }) as RateState | undefined;
    return row ? { ...row, admitted: true } : { ...this.state(keyId), admitted: false };
  }

  /** Moves the token time by `tokenMs`: forward for tokens spent, back (never before now) for a reservation returned. */
  spend(keyId: string, tokenMs: number): void {
    this.s
      .get(`UPDATE rate_state SET token_tat = CASE WHEN @tokenMs >= 0 THEN max(token_tat, ${NOW_MS}) + @tokenMs ELSE max(token_tat + @tokenMs, ${NOW_MS}) END WHERE key_id = @keyId`)
      .run({ tokenMs, keyId });
  }

  private state(keyId: string): RateState {
    return this.s.get(`SELECT ${NOW_MS} AS now, request_tat AS requestTat, token_tat AS tokenTat FROM rate_state WHERE key_id = ?`).get(keyId) as RateState;
  }
}
