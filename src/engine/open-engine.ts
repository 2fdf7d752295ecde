import { BadRequestError } from '../core/errors.js';
import { isPostgresUrl, openFileStore, openStore } from '../store/open.js';
import type { MigrationStep, Store } from '../store/types.js';
import { Engine, type EngineOptions, engineLimits } from './engine.js';

export interface OpenEngineOptions extends Omit<EngineOptions, 'store'> {
  /** A SQLite file path, a `postgres://` URL (openEngine only), or a store already open. */
  db: string | Store;
  /** Create the database file's directory when missing (the default data directory only). */
  createDbDir?: boolean;
  /** PostgreSQL only: connections in this process's pool. */
  poolSize?: number;
  /** Told before and after each schema migration opening the database runs (a progress line). */
  onMigrate?: (step: MigrationStep) => void;
}

/**
 * The engine on `opts.db`, for callers that can wait: a `postgres://` URL is connected and
 * migrated first (a database that cannot be reached fails here, once, with its exit code); a
 * SQLite path is opened synchronously, exactly as openEngineSync does.
 */
export async function openEngine(opts: OpenEngineOptions): Promise<Engine> {
  engineLimits(opts);
  if (typeof opts.db !== 'string' || !isPostgresUrl(opts.db)) return openEngineSync(opts);
  const store = await openStore(opts.db, { poolSize: opts.poolSize, onMigrate: opts.onMigrate });
  return engineOn(store, opts);
}

/** The engine on a SQLite file (or a store already open): what tests, benchmarks and scripts use. */
export function openEngineSync(opts: OpenEngineOptions): Engine {
  if (typeof opts.db !== 'string') return new Engine({ ...engineOptions(opts), store: opts.db });
  engineLimits(opts);
  if (isPostgresUrl(opts.db)) {
    // Connecting is async: a URL taken for a file path here would make a folder named "postgres:".
    throw new BadRequestError('a PostgreSQL URL needs openEngine(), not openEngineSync()', { hint: 'await openEngine({ db: url, ... })' });
  }
  return engineOn(openFileStore(opts.db, { createDir: opts.createDbDir, onMigrate: opts.onMigrate }), opts);
}

/** The engine over a store this call opened: the store is closed again if the engine refuses its options. */
function engineOn(store: Store, opts: OpenEngineOptions): Engine {
  try {
    return new Engine({ ...engineOptions(opts), store });
  } catch (err) {
    void store.close();
    throw err;
  }
}

function engineOptions(opts: OpenEngineOptions): Omit<EngineOptions, 'store'> {
  const { db: _db, createDbDir: _dir, poolSize: _pool, ...rest } = opts;
  return rest;
}
