import { type Db, Statements } from './db.js';
import type { CalibrationRow } from '../rows.js';

/** Per-route calibration, kept so later turns and other processes fit the first time. */
export class CalibrationRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  get(routeKey: string): CalibrationRow | undefined {
    return this.s
      .get(
        `SELECT ${COLUMNS} FROM route_calibration WHERE route_key = ?`,
      )
      .get(routeKey) as CalibrationRow | undefined;
  }

  save(row: CalibrationRow): void {
    this.s
      .get(
        `INSERT INTO route_calibration (route_key, factor, samples, context_tokens, context_source, updated_at)
         VALUES (@routeKey, @factor, @samples, @contextTokens, @contextSource, @updatedAt)
         ON CONFLICT (route_key) DO UPDATE SET factor = excluded.factor, samples = excluded.samples,
           context_tokens = excluded.context_tokens, context_source = excluded.context_source, updated_at = excluded.updated_at`,
      )
      .run(row);
  }

  list(): CalibrationRow[] {
    return this.s.get(`SELECT ${COLUMNS} FROM route_calibration ORDER BY route_key`).all() as CalibrationRow[];
  }

  delete(routeKey?: string): number {
    if (routeKey === undefined) return this.s.get('DELETE FROM route_calibration').run().changes;
    return this.s.get('DELETE FROM route_calibration WHERE route_key = ?').run(routeKey).changes;
  }
}

const COLUMNS = 'route_key AS routeKey, factor, samples, context_tokens AS contextTokens, context_source AS contextSource, updated_at AS updatedAt';
