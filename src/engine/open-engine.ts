import { isPostgresUrl, openStore } from '../store/open.js';
import { Engine, type EngineOptions } from './engine.js';

export interface OpenEngineOptions extends EngineOptions {
  /** PostgreSQL only: connections in this process's pool. */
  poolSize?: number;
}

/**
 * The engine on `opts.db`, for callers that can wait: a `postgres://` URL is connected and
 * migrated first (a database that cannot be reached fails here, once, with its exit code); a
 * SQLite path is opened by the engine itself, synchronously, exactly as `new Engine` does.
 */
export async function openEngine(opts: OpenEngineOptions): Promise<Engine> {
  if (typeof opts.db !== 'string' || !isPostgresUrl(opts.db)) return new Engine(opts);
  const store = await openStore(opts.db, { poolSize: opts.poolSize });
  try {
    return new Engine({ ...opts, db: store });
  } catch (err) {
    await store.close();
    throw err;
  }
}
