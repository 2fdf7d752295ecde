import type { Pool } from 'pg';
import type { CalibrationRow, CalibrationStore } from '../types.js';

/** Per-route calibration, shared by every replica. */
export class PgCalibrationStore implements CalibrationStore {
  constructor(private readonly pool: Pool) {}

  async get(routeKey: string): Promise<CalibrationRow | undefined> {
    const { rows } = await this.pool.query<CalibrationRow>(
      `SELECT route_key AS "routeKey", factor, samples, context_tokens AS "contextTokens", updated_at AS "updatedAt"
       FROM route_calibration WHERE route_key = $1`,
      [routeKey],
    );
    return rows[0];
  }

  async save(row: CalibrationRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO route_calibration (route_key, factor, samples, context_tokens, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (route_key) DO UPDATE SET factor = excluded.factor, samples = excluded.samples,
         context_tokens = excluded.context_tokens, updated_at = excluded.updated_at`,
      [row.routeKey, row.factor, row.samples, row.contextTokens, row.updatedAt],
    );
  }
}
