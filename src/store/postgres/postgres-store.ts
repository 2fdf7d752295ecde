import type { Pool } from 'pg';
import { ProviderError } from '../../core/errors.js';
import type { Store } from '../types.js';
import { PG_CONNECT_TIMEOUT_MS, PG_QUERY_TIMEOUT_MS, mapDatabaseErrors, migrate } from './pg-db.js';
import { PgAccountStore } from './pg-account-store.js';
import { PgCalibrationStore } from './pg-calibration-store.js';
import { PgEntityStore, steerWrite } from './pg-entity-store.js';
import { PgHistoryStore } from './pg-history-store.js';
import { PgPromptStore } from './pg-prompt-store.js';
import { PgIdempotencyStore } from './pg-idempotency-store.js';
import { PgKeyStore } from './pg-key-store.js';
import { PgLeaseStore } from './pg-lease-store.js';
import { PgLogStore } from './pg-log-store.js';
import { PgMemoryStore } from './pg-memory-store.js';
import { PgRateStore } from './pg-rate-store.js';
import { PgResponseStore } from './pg-response-store.js';
import { PgUniverseStore } from './pg-universe-store.js';
import { PgVectorStore } from './pg-vector-store.js';

import type { MigrationStep } from '../migration-step.js';

export interface PostgresOptions {
  /** Connections in the pool (each unit of work holds one for its transaction). Default 10. */
  poolSize?: number;
  /** Told before and after each migration it runs. */
  onMigrate?: (step: MigrationStep) => void;
}

export { DEFAULT_POOL_SIZE } from '../../core/wire/entity-types.js';
import { DEFAULT_POOL_SIZE } from '../../core/wire/entity-types.js';

/** PostgreSQL's BIGINT (20) and NUMERIC (1700) arrive as strings; the row types hold JS numbers. */
const NUMERIC_OIDS = new Set([20, 1700]);

/** The store on a PostgreSQL database, shared by any number of replicas. */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly entities: PgEntityStore;
  readonly leases: PgLeaseStore;
  readonly memory: PgMemoryStore;
  readonly idempotency: PgIdempotencyStore;
  readonly accounts: PgAccountStore;
  readonly universes: PgUniverseStore;
  readonly logs: PgLogStore;
  readonly keys: PgKeyStore;
  readonly rates: PgRateStore;
  readonly calibration: PgCalibrationStore;
  readonly history: PgHistoryStore;
  readonly prompts: PgPromptStore;
  readonly responses: PgResponseStore;
  readonly vectors: PgVectorStore;
  private closed = false;

  constructor(readonly pool: Pool) {
    this.entities = new PgEntityStore(pool);
    this.leases = new PgLeaseStore(pool);
    this.memory = new PgMemoryStore(pool);
    this.idempotency = new PgIdempotencyStore(pool);
    this.accounts = new PgAccountStore(pool);
    this.universes = new PgUniverseStore(pool);
    this.logs = new PgLogStore(pool);
    this.keys = new PgKeyStore(pool);
    this.rates = new PgRateStore(pool);
    this.calibration = new PgCalibrationStore(pool);
    this.history = new PgHistoryStore(pool, (w) => steerWrite(pool, w));
    this.prompts = new PgPromptStore(pool);
    this.responses = new PgResponseStore(pool);
    this.vectors = new PgVectorStore(pool);
  }

  /** Connects (loading `pg` only now, so SQLite commands never do), then migrates under the advisory lock. */
  static async open(url: string, opts: PostgresOptions = {}): Promise<PostgresStore> {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? DEFAULT_POOL_SIZE,
      // A stalled server answers 503 within these bounds, never hangs a request (pg-db.ts).
      query_timeout: PG_QUERY_TIMEOUT_MS,
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => NUMERIC_OIDS.has(oid) ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser },
    });
    // An idle client that loses its server (a failover) is dropped; the next query gets a new one.
    pool.on('error', () => {});
    // A server's goodbye (57P01 on a restart, a reset socket) can reach a client in a moment when
    // neither the pool nor its borrower listens, and an 'error' no one hears ends the process (seen
    // in the fault test, node-postgres#2762). Every client listens from birth; the query in flight,
    // if any, still fails, and a broken client is still dropped.
    pool.on('connect', (client) => client.on('error', () => {}));
    try {
      await migrate(pool, undefined, opts.onMigrate);
    } catch (err) {
      await pool.end().catch(() => {});
      // inTransaction already made a lost connection a 503; the reason at startup says more.
      const raw = err instanceof ProviderError ? err.cause : err;
      const clear = unreachable(url, raw);
      throw clear === raw ? err : clear;
    }
    return new PostgresStore(mapDatabaseErrors(pool));
  }

  /** PostgreSQL has no page images to fold: nothing to do. */
  async checkpoint(): Promise<void> {}

  /** PostgreSQL checks its pages itself; this confirms the schema answers. */
  async integrityCheck(): Promise<string> {
    await this.pool.query('SELECT count(*) FROM mgpt_schema_migrations');
    return 'ok';
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

/** A clear error for a database that cannot be reached or entered; other errors pass unchanged. */
function unreachable(url: string, err: unknown): unknown {
  const code = String((err as { code?: unknown }).code ?? '');
  const where = redact(url);
  const opts = { cause: err, retryable: true, status: 503 };
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', '57P03'].includes(code)) {
    return new ProviderError(`cannot reach PostgreSQL at ${where}: ${(err as Error).message}`, {
      ...opts,
      hint: 'check that the server is running and the URL\'s host and port are right',
    });
  }
  if (code === '28P01' || code === '28000') {
    return new ProviderError(`PostgreSQL at ${where} refused the login: ${(err as Error).message}`, {
      ...opts,
      retryable: false,
      hint: 'check the user and password in the URL (postgres://user:password@host:5432/database)',
    });
  }
  if (code === '3D000') {
    return new ProviderError(`PostgreSQL at ${where}: ${(err as Error).message}`, {
      ...opts,
      retryable: false,
      hint: 'create the database first (createdb <name>) or name another one in the URL',
    });
  }
  return err;
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the given URL';
  }
}
