import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { BadRequestError, databaseBusy, MgptError, ProviderError } from '../../core/errors.js';
import { PG_MIGRATIONS } from './migrations.js';
import { type MigrationStep, migrationTitle } from '../migration-step.js';

/** Anything that runs a query: the pool (one statement, its own transaction) or a client inside one. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export type TxMode = 'write' | 'snapshot';

const BEGIN: Record<TxMode, string> = {
  write: 'BEGIN',
  snapshot: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
};

/**
 * Runs `fn` in one transaction on one pooled client: committed when it resolves, rolled back when
 * it throws. A client whose connection broke or timed out is dropped from the pool, not rolled back.
 *
 * While the client is checked out, pg-pool listens for nothing on it: a connection the server ends
 * (a restart, an administrator's termination) emits `error`, which with no listener ends the
 * process. So it is listened for here, for as long as the client is ours.
 */
export async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>, mode: TxMode = 'write'): Promise<T> {
  const client = await pool.connect().catch((err: unknown) => Promise.reject(lostDatabase(err)));
  let broken: Error | undefined;
  const onError = (err: Error) => (broken ??= err);
  client.on('error', onError);
  try {
    await client.query(BEGIN[mode]);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (broken === undefined && lostDatabase(err) === err) await rollback(client).catch((e: Error) => (broken = e));
    else broken ??= err as Error;
    throw databaseError(err);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

async function rollback(client: PoolClient): Promise<void> {
  await client.query('ROLLBACK');
}

/**
 * The longest any one statement may take before it is given up as a stalled database (503), and
 * the longest a request waits for a pooled connection (or a new one to open). A frozen server
 * answers nothing, so the bound must be the client's own: PostgreSQL's statement_timeout cannot fire
 * in a stopped backend.
 */
export const PG_QUERY_TIMEOUT_MS = 10_000;
export const PG_CONNECT_TIMEOUT_MS = 5_000;

/** How long one migration may run: rewriting a large table for its search column takes minutes, not the 10 s a request gets. */
const MIGRATION_TIMEOUT_MS = 6 * 60 * 60 * 1000;

/** Any constant: replicas that start together queue on it, so the schema is migrated once. */
const MIGRATION_LOCK = 0x6d677074; // "mgpt"

/**
 * Brings the schema up to date in one transaction under a transaction-level advisory lock: a
 * second replica waits, then finds the versions recorded and applies nothing.
 */
export async function migrate(pool: Pool, migrations: readonly string[] = PG_MIGRATIONS, onMigrate?: (step: MigrationStep) => void): Promise<number> {
  return inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query(
      `CREATE TABLE IF NOT EXISTS mgpt_schema_migrations (
         version    INTEGER PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await c.query<{ v: number | null }>('SELECT max(version) AS v FROM mgpt_schema_migrations');
    const current = rows[0]?.v ?? 0;
    if (current > migrations.length) {
      throw new MgptError(`database schema version ${current} is newer than this mgpt understands (${migrations.length})`, {
        hint: 'upgrade mgpt on every replica, or point --db at another database',
      });
    }
    for (let v = current; v < migrations.length; v++) {
      const step = { version: v + 1, total: migrations.length, what: migrationTitle(migrations[v]!), upgrade: current > 0 };
      const t0 = performance.now();
      onMigrate?.(step);
      // A migration over existing rows (an index over a large transcript) may take longer than a request may.
      // node-postgres reads a query's own query_timeout (client.js), though its types do not list it.
      await c.query({ text: migrations[v]!, query_timeout: MIGRATION_TIMEOUT_MS } as { text: string });
      await c.query('INSERT INTO mgpt_schema_migrations (version) VALUES ($1)', [v + 1]);
      onMigrate?.({ ...step, ms: performance.now() - t0 });
    }
    return migrations.length - current;
  });
}

/** SQLSTATE codes of a lost or refused connection: class 08, and the server shutting down or starting. */
const LOST_CODES = /^(08...|57P0[123]|53300|E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND|AI_AGAIN))$/;
/** What `pg` says, without a code, when the socket closes under a query or a pooled client waits too long. */
const LOST_MESSAGES = /Connection terminated|not queryable|timeout exceeded when trying to connect|Client was closed|Query read timeout|connection timeout/i;

/**
 * A database that went away mid-run (a restart, a failover, the network) as a 503 with a hint,
 * exit 7 in the CLI: never a raw driver stack. Any other error passes unchanged.
 */
export function lostDatabase(err: unknown): unknown {
  if (err instanceof MgptError || typeof err !== 'object' || err === null) return err;
  const code = String((err as { code?: unknown }).code ?? '');
  const message = String((err as { message?: unknown }).message ?? '');
  if (!LOST_CODES.test(code) && !LOST_MESSAGES.test(message)) return err;
  return new ProviderError(`the PostgreSQL database is unavailable: ${message || code}`, {
    cause: err,
    retryable: true,
    status: 503,
    hint: 'check that PostgreSQL is running and reachable, then retry (nothing was half-written: each write is one transaction)',
  });
}

/**
 * Text PostgreSQL cannot store (SQLSTATE 22021): from a JS string only a NUL (U+0000) can be, and
 * it comes from the client (an id in a path, `%00`), so it is a 400, never a 500. Any other error passes unchanged.
 */
export function refusedText(err: unknown): unknown {
  if (err instanceof MgptError || (err as { code?: unknown } | null)?.code !== '22021') return err;
  return new BadRequestError('text may not contain the NUL character (U+0000)');
}

/** A driver error as the engine's, by its code: another writer (409), a lost database (503) or text it cannot store (400); any other unchanged. */
export function databaseError(err: unknown): unknown {
  return databaseBusy(err) ?? refusedText(lostDatabase(err));
}

/**
 * Maps the errors of every one-statement query on `pool` (the stores call `pool.query` directly)
 * as `databaseError` does; `inTransaction` maps its own.
 */
export function mapDatabaseErrors(pool: Pool): Pool {
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as { query: unknown }).query = (...args: unknown[]) => query(...args).catch((err: unknown) => Promise.reject(databaseError(err)));
  return pool;
}
