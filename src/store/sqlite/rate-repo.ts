import { type Db, Statements, inTransaction } from './db.js';
import type { RateGate, RateState } from '../rows.js';

/** The database's clock in epoch milliseconds: every process on the file reads one clock. */
const NOW_MS = `((julianday('now') - 2440587.5) * 86400000.0)`;

/** A request's cost may land on the period's edge (7 requests of 60000/7 ms): within this, it fits. */
const EDGE_MS = 0.001;

/**
 * Rate state per key (see RateStore). The admission is one upsert whose update applies only when
 * the request fits, so two processes on the file never admit past the limit between them: SQLite
 * runs one writer at a time, and the statement reads and writes the row in one step. Each call reads
 * the clock once, in its write transaction, so a refusal reports the state at the moment it refused.
 */
export class RateRepo {
  private readonly s: Statements;
  constructor(private readonly db: Db) {
    this.s = new Statements(db);
  }

  admit(keyId: string, g: RateGate): RateState & { admitted: boolean } {
    return this.atNow((now) => this.admitAt(keyId, g, now));
  }

  private admitAt(keyId: string, g: RateGate, now: number): RateState & { admitted: boolean } {
    const row = this.s
      .get(
        `INSERT INTO rate_state (key_id, request_tat, token_tat) VALUES (@keyId, @now + @requestMs, @now)
         ON CONFLICT (key_id) DO UPDATE SET request_tat = max(request_tat, excluded.token_tat) + @requestMs
         WHERE max(request_tat, excluded.token_tat) + @requestMs - excluded.token_tat <= @periodMs + ${EDGE_MS}
           AND (@tokens = 0 OR token_tat - excluded.token_tat < @periodMs)
         RETURNING @now AS now, request_tat AS requestTat, token_tat AS tokenTat`,
      )
      .get({ keyId, now, requestMs: g.requestMs, periodMs: g.periodMs, tokens: g.tokens ? 1 : 0 }) as RateState | undefined;
    return row ? { ...row, admitted: true } : { ...this.state(keyId, now), admitted: false };
  }

  /** Reserves `tokenMs` of the token time when some of the allowance is left; the state after, or refused and unchanged. */
  reserve(keyId: string, tokenMs: number, periodMs: number): RateState & { admitted: boolean } {
    return this.atNow((now) => this.reserveAt(keyId, tokenMs, periodMs, now));
  }

  private reserveAt(keyId: string, tokenMs: number, periodMs: number, now: number): RateState & { admitted: boolean } {
    const row = this.s
      .get(
        `UPDATE rate_state SET token_tat = max(token_tat, @now) + @tokenMs
         WHERE key_id = @keyId AND token_tat - @now < @periodMs
         RETURNING @now AS now, request_tat AS requestTat, token_tat AS tokenTat`,
      )
      .get({ keyId, now, tokenMs, periodMs }) as RateState | undefined;
    return row ? { ...row, admitted: true } : { ...this.state(keyId, now), admitted: false };
  }

  /** Moves the token time by `tokenMs`: forward for tokens spent, back (never before now) for a reservation returned. */
  spend(keyId: string, tokenMs: number): void {
    this.s
      .get(`UPDATE rate_state SET token_tat = CASE WHEN @tokenMs >= 0 THEN max(token_tat, ${NOW_MS}) + @tokenMs ELSE max(token_tat + @tokenMs, ${NOW_MS}) END WHERE key_id = @keyId`)
      .run({ tokenMs, keyId });
  }

  /** Runs `step` in one write transaction with the database's clock read once at its start. */
  private atNow<T>(step: (now: number) => T): T {
    return inTransaction(this.db, () => step((this.s.get(`SELECT ${NOW_MS} AS now`).get() as { now: number }).now));
  }

  private state(keyId: string, now: number): RateState {
    return this.s.get(`SELECT @now AS now, request_tat AS requestTat, token_tat AS tokenTat FROM rate_state WHERE key_id = @keyId`).get({ keyId, now }) as RateState;
  }
}
