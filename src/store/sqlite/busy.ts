import { databaseBusy } from '../../core/errors.js';

/**
 * A sub-store whose methods reject a lock wait that ran out (SQLITE_BUSY past busy_timeout) as
 * the engine's ConflictError, the way PostgreSQL's driver errors become the engine's in pg-db.ts:
 * without it the loser of a contended turn saw a raw SqliteError, exit 1 from the CLI and a 500
 * from `mgpt serve` (which its remote clients retried, then reported as exit 7). Any other error
 * passes unchanged.
 */
export function busyAsConflict<T extends object>(store: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: never[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: never[]) =>
      method(...args).catch((err: unknown) => {
        throw databaseBusy(err) ?? err;
      });
  }
  return wrapped as T;
}
