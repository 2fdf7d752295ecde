import { isPostgresUrl } from '../core/db-url.js';
import { BadRequestError } from '../core/errors.js';

export { describeDb, isPostgresUrl } from '../core/db-url.js';
import type { OpenOptions } from './sqlite/db.js';
import type { PostgresOptions } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

export interface OpenStoreOptions extends OpenOptions, PostgresOptions {}

/**
 * The store behind `--db`: a `postgres://` or `postgresql://` URL opens PostgreSQL (the driver
 * loads only then); anything else is a SQLite file path.
 */
export async function openStore(target: string, opts: OpenStoreOptions = {}): Promise<Store> {
  if (!isPostgresUrl(target)) return openFileStore(target, opts);
  checkPostgresUrl(target);
  const poolSize = checkPoolSize(opts.poolSize);
  const { PostgresStore } = await import('./postgres/postgres-store.js');
  return PostgresStore.open(target, { poolSize, onMigrate: opts.onMigrate });
}

/** The store in a database file, opened at once (SQLite). */
export function openFileStore(path: string, opts: OpenOptions = {}): Store {
  return SqliteStore.open(path, opts);
}

const URL_HINT = 'write it as postgres://user:password@host:5432/database (percent-encode special characters in the password)';

/** Refuses a URL the driver would misread, before any connection is tried. */
export function checkPostgresUrl(target: string): void {
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    throw new BadRequestError('invalid PostgreSQL URL', { hint: URL_HINT });
  }
  if (!u.hostname && !u.searchParams.has('host')) {
    throw new BadRequestError('invalid PostgreSQL URL: it names no host', { hint: URL_HINT });
  }
  if (u.port && !(Number(u.port) > 0 && Number(u.port) < 65536)) {
    throw new BadRequestError(`invalid PostgreSQL URL: port ${u.port} is out of range`, { hint: URL_HINT });
  }
  try {
    decodeURIComponent(u.username);
    decodeURIComponent(u.password);
    decodeURIComponent(u.pathname);
  } catch {
    throw new BadRequestError('invalid PostgreSQL URL: a malformed %-escape', { hint: URL_HINT });
  }
}

function checkPoolSize(n: number | undefined): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < 1) {
    throw new BadRequestError(`invalid pool size ${n}: it must be a whole number of connections, 1 or more`, {
      hint: 'the default is 10; each replica holds at most this many connections',
    });
  }
  return n;
}
