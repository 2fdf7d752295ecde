import type { Pool } from 'pg';
import type { CalibrationRow, CalibrationStore } from '../types.js';

/** Per-route calibration, shared by every replica. */
export class PgCalibrationStore implements CalibrationStore {
  constructor(private readonly pool: Pool) {}

  async get(routeKey: string): Promise<CalibrationRow | undefined> {
    const { rows } = await this.pool.query<CalibrationRow>(
      `SELECT ${COLUMNS} FROM route_calibration WHERE route_key = $1`,
      [routeKey],
    );
    return rows[0];
  }

  async save(row: CalibrationRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO route_calibration (route_key, factor, samples, context_tokens, context_source, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (route_key) DO UPDATE SET factor = excluded.factor, samples = excluded.samples,
         context_tokens = excluded.context_tokens, context_source = excluded.context_source, updated_at = excluded.updated_at`,
      [row.routeKey, row.factor, row.samples, row.contextTokens, row.contextSource, row.updatedAt],
    );
  }

  async list(): Promise<CalibrationRow[]> {
    return (await this.pool.query<CalibrationRow>(`SELECT ${COLUMNS} FROM route_calibration ORDER BY route_key`)).rows;
  }

  async delete(routeKey?: string): Promise<number> {
    const r = routeKey === undefined
      ? await this.pool.query('DELETE FROM route_calibration')
      : await this.pool.query('DELETE FROM route_calibration WHERE route_key = $1', [routeKey]);
    return r.rowCount ?? 0;
  }
}

const COLUMNS = 'route_key AS "routeKey", factor, samples, context_tokens AS "contextTokens", context_source AS "contextSource", updated_at AS "updatedAt"';
