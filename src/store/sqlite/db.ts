import { type MigrationStep, migrationTitle } from '../migration-step.js';
import { closeSync, constants, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { BadRequestError, MgptError, fromSystemError } from '../../core/errors.js';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/** Prepared statements, compiled once per connection: preparing costs more than running. */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(readonly db: Db) {}

  get(sql: string): Database.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }
}

export interface OpenOptions {
  /** Create the file's directory (mode 0700) when missing: only for the default data directory. */
  createDir?: boolean;
  /** Told before and after each migration it runs (a new schema version: the search index over an existing transcript takes a while). */
  onMigrate?: (step: MigrationStep) => void;
}

/** Opens (creating if needed) the database file with the pragmas the engine relies on, then migrates. */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (path !== ':memory:') {
    prepareDirectory(path, opts.createDir ?? false);
    createPrivateFile(path);
  }
  let db: Db;
  try {
    db = new Database(path, { nativeBinding: nativeBinding() });
    // Before anything reads the file: processes opening it at once (one recovering the WAL) wait
    // for each other instead of failing at once with SQLITE_BUSY.
    db.pragma('busy_timeout = 5000');
    // The first statement that reads the file: a WAL database in a read-only directory fails here.
    enableWal(db);
  } catch (err) {
    const clear = fromSystemError(err);
    if (clear !== err) throw clear;
    throw new MgptError(`cannot open database ${path}: ${(err as Error).message}`, {
      cause: err,
      hint: 'check that the file is readable and its directory writable (SQLite keeps its -wal and -shm files beside it)',
    });
  }
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Deleted rows are overwritten with zeros, so a deleted entity's text does not linger in the file.
  db.pragma('secure_delete = ON');
  migrate(db, opts.onMigrate);
  return db;
}

/**
 * WAL mode, set once for the file. A new file is still in rollback-journal mode, where processes
 * opening it at once (replicas started together) each hold a read lock while asking for the
 * exclusive one the change needs: SQLite answers one of them SQLITE_BUSY at once, without waiting
 * (waiting could deadlock), so it tries again after a short pause (about 1 open in 180 met it).
 */
function enableWal(db: Db): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= WAL_ATTEMPTS) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 45);
    }
  }
}

const WAL_ATTEMPTS = 40;

/**
 * The default data directory is made private to the user (0700); a path someone chose must be in a
 * directory that exists, so a typo does not silently start an empty database somewhere new.
 */
function prepareDirectory(path: string, create: boolean): void {
  const dir = dirname(path);
  if (create) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) {
    throw new BadRequestError(`cannot open database ${path}: directory ${dir} does not exist`, {
      hint: `create it first (mkdir -p ${dir}) or pass another --db; only the default data directory is created for you`,
    });
  }
}

/**
 * Creates a missing database file 0600 (it holds conversations) before SQLite opens it: SQLite
 * would create it 0644 less the umask, and gives its -wal and -shm files the database file's mode.
 */
function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch {
    // An existing file keeps its mode; any other problem is reported by the open that follows.
  }
}

let binding: string | undefined | null = null;

/**
 * The compiled addon's path, handed to better-sqlite3 directly: its default lookup (the
 * `bindings` package) probes a dozen paths on every start.
 */
export function nativeBinding(): string | undefined {
  if (binding === null) {
    const pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
    const file = join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
    binding = existsSync(file) ? file : undefined;
  }
  return binding;
}

export function migrate(db: Db, onMigrate?: (step: MigrationStep) => void): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new MgptError(
      `database schema version ${current} is newer than this mgpt understands (${MIGRATIONS.length})`,
      { hint: 'upgrade mgpt, or point --db at another file' },
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    const step = { version: v + 1, total: MIGRATIONS.length, what: migrationTitle(MIGRATIONS[v]!), upgrade: current > 0 };
    const t0 = performance.now();
    onMigrate?.(step);
    db.transaction(() => {
      // Re-read inside the write lock: another process may have migrated meanwhile.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now > v) return;
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
    onMigrate?.({ ...step, ms: performance.now() - t0 });
  }
}

const runners = new WeakMap<Db, Database.Transaction<(fn: () => unknown) => unknown>>();

/** Runs `fn` in one write transaction (BEGIN IMMEDIATE, so cross-process writers queue, not deadlock). */
export function inTransaction<T>(db: Db, fn: () => T): T {
  let run = runners.get(db);
  if (!run) {
    run = db.transaction((f: () => unknown) => f());
    runners.set(db, run);
  }
  return run.immediate(fn) as T;
}

export function integrityCheck(db: Db): string {
  return db.pragma('integrity_check', { simple: true }) as string;
}

