import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { BadRequestError, ProviderError } from '../../src/core/errors.js';
import { checkPostgresUrl, isPostgresUrl, openStore } from '../../src/store/open.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { inTransaction } from '../../src/store/postgres/pg-db.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

describe('openStore: choosing the database from --db', () => {
  const dir = tempDir();

  it('tells a PostgreSQL URL from a file path', () => {
    expect(isPostgresUrl('postgres://u@h/db')).toBe(true);
    expect(isPostgresUrl('postgresql://u@h:5432/db')).toBe(true);
    expect(isPostgresUrl('POSTGRES://h/db')).toBe(true);
    expect(isPostgresUrl('postgres:')).toBe(false);
    expect(isPostgresUrl('./postgres://x')).toBe(false);
    expect(isPostgresUrl('/var/lib/mgpt/mgpt.db')).toBe(false);
  });

  it('refuses a malformed URL or pool size as a usage error with a hint, never echoing the password', async () => {
    for (const bad of ['postgres://user:s3cret@host:99999/db', 'postgres://user:s3cret@/db', 'postgres://us%zz:s3cret@host/db']) {
      const err = await openStore(bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).exitCode).toBe(2);
      expect((err as BadRequestError).message).toMatch(/^invalid PostgreSQL URL/);
      expect((err as BadRequestError).hint).toMatch(/postgres:\/\/user:password@host:5432\/database/);
      expect(`${(err as Error).message} ${(err as BadRequestError).hint}`).not.toContain('s3cret');
    }
    expect(() => checkPostgresUrl('postgres:///db?host=/run/postgresql')).not.toThrow();
    for (const poolSize of [0, -1, 1.5, Number.NaN]) {
      const err = await openStore('postgres://h/db', { poolSize }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as Error).message).toMatch(/^invalid pool size/);
    }
  });

  it('says clearly when PostgreSQL cannot be reached (exit 7), without the password', async () => {
    const err = await openStore('postgres://mgpt:s3cret@127.0.0.1:1/mgpt').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).exitCode).toBe(7);
    expect((err as Error).message).toMatch(/^cannot reach PostgreSQL at postgres:\/\/mgpt:\*\*\*@127\.0\.0\.1:1\/mgpt/);
    expect((err as Error).message).not.toContain('s3cret');
    expect((err as ProviderError).hint).toMatch(/running/);
  });

  it('loads the pg driver only for a PostgreSQL URL', () => {
    const probe = join(dir, 'probe.mts');
    const open = resolve('src/store/open.ts');
    writeFileSync(
      probe,
      `import { createRequire } from 'node:module';
       const { openStore } = await import(${JSON.stringify(open)});
       const loaded = () => Object.keys(createRequire(${JSON.stringify(open)}).cache).some((k) => k.includes('/node_modules/pg/'));
       const st = await openStore(${JSON.stringify(join(dir, 'plain.db'))});
       const afterSqlite = loaded();
       st.close();
       await openStore('postgres://127.0.0.1:1/none').catch(() => {});
       console.log(JSON.stringify({ afterSqlite, afterPostgres: loaded() }));`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', probe], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ afterSqlite: false, afterPostgres: true });
  });
});

// Where PostgreSQL cannot start here (not installed), startPostgres() prints a banner saying these
// did not run and they skip; under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead.
const cluster = await startPostgres('the PostgreSQL store tests');
if (cluster) afterAll(() => cluster.stop());
else it.skip('the PostgreSQL store: PostgreSQL could not be started here (see the banner)', () => {});

describe.skipIf(!cluster)('PostgresStore', () => {
  let n = 0;
  const blank = () => cluster!.createDatabase(`pgstore_${n++}`);

  it('opens through openStore with the pool size asked for (default 10)', async () => {
    const url = blank();
    const dflt = await openStore(url);
    const sized = await openStore(url, { poolSize: 3 });
    try {
      expect(dflt).toBeInstanceOf(PostgresStore);
      expect(sized).toBeInstanceOf(PostgresStore);
      expect((dflt as PostgresStore).kind).toBe('postgres');
      expect((dflt as PostgresStore).pool.options.max).toBe(10);
      expect((sized as PostgresStore).pool.options.max).toBe(3);
    } finally {
      await (dflt as PostgresStore).close();
      await (sized as PostgresStore).close();
    }
  });

  it('records each migration once in mgpt_schema_migrations when replicas start together', async () => {
    const url = blank();
    const stores = await Promise.all([1, 2, 3, 4].map(() => PostgresStore.open(url, { poolSize: 2 })));
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT version FROM mgpt_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
      const tables = await c.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
      expect(tables.rows.map((r) => r.tablename)).toEqual([
        'accounts', 'api_keys', 'blocks', 'completion_keys', 'entities', 'generation_logs', 'idempotency_keys', 'import_sources', 'ledger', 'memory_blocks', 'memory_history', 'message_vectors', 'messages',
        'mgpt_schema_migrations', 'openai_conversations', 'openai_responses', 'prompt_heads', 'rate_state', 'rotations', 'route_calibration', 'stored_prompts', 'turn_leases', 'turn_windows', 'universe_messages', 'universe_requests', 'universes',
      ]);
    } finally {
      await c.end();
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('refuses text with a NUL (an id from a path, %00) as a bad request, not a driver error (500)', async () => {
    const store = await PostgresStore.open(blank());
    try {
      await expect(store.entities.get('local', 'a\0b')).rejects.toBeInstanceOf(BadRequestError);
      await expect(store.entities.delete('local', '\0')).rejects.toMatchObject({ code: 'bad_request', message: 'text may not contain the NUL character (U+0000)' });
      await expect(inTransaction(store.pool, (c) => c.query('SELECT $1::text', ['\0']))).rejects.toBeInstanceOf(BadRequestError);
    } finally {
      await store.close();
    }
  });

  it('refuses a database migrated by a newer mgpt', async () => {
    const url = blank();
    await (await PostgresStore.open(url)).close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('INSERT INTO mgpt_schema_migrations (version) VALUES ($1)', [PG_MIGRATIONS.length + 1]);
    await c.end();
    const err = await PostgresStore.open(url).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `database schema version ${PG_MIGRATIONS.length + 1} is newer than this mgpt understands (${PG_MIGRATIONS.length})`,
    );
  });

  it('holds a turn commit\'s lease row so another replica cannot take it mid-commit', async () => {
    const url = blank();
    const s = await PostgresStore.open(url, { poolSize: 2 });
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const subject = 'entity:e1' as const;
      expect(await s.leases.acquire({ subject, owner: 'a', idempotencyKey: null, contentSha256: null, expiresAt: 1 }, 0)).toBeNull();
      // Another session holds the row as commitTurn's check does: acquire must wait for it, then decide.
      await c.query('BEGIN');
      await c.query(`SELECT 1 FROM turn_leases WHERE subject = $1 FOR UPDATE`, [subject]);
      let settled = false;
      const taking = s.leases.acquire({ subject, owner: 'b', idempotencyKey: null, contentSha256: null, expiresAt: 99 }, 50)
        .finally(() => { settled = true; });
      // Wait until the acquire is queued behind our row lock (seen in pg_locks), not for a time.
      for (;;) {
        const { rows } = await c.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`);
        if (rows[0].n > 0) break;
      }
      expect(settled).toBe(false);
      await c.query(`DELETE FROM turn_leases WHERE subject = $1`, [subject]);
      await c.query('COMMIT');
      expect(await taking).toBeNull();
      expect(await s.leases.refresh(subject, 'b', 100)).toBe(true);
    } finally {
      await c.end();
      await s.close();
    }
  });
});
