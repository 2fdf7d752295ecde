import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTar } from '../../src/core/archive/tar.js';
import { cliEnv, mgpt, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// The real binary with `--db postgres://...` (and MGPT_DB): every administration command, a turn,
// export and import, serve's probes, and the errors of a bad or unreachable URL.
// Where PostgreSQL cannot start here (not installed), startPostgres() prints a banner saying these
// did not run and they skip; under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead.
const cluster = await startPostgres('mgpt commands on PostgreSQL (--db postgres://...)');
afterAll(() => cluster?.stop());

const dir = tempDir('mgpt-pg-cli-');
const ok = (r: { code: number | null; stderr: string }) => {
  expect(r.stderr).not.toMatch(/^error:/m);
  expect(r.code).toBe(0);
};

describe.skipIf(!cluster)('mgpt on PostgreSQL', () => {
  const url = () => cluster!.url;
  // The default SQLite file must never be touched: MGPT_DB points elsewhere, --db wins.
  const env = cliEnv(join(dir, 'home'));
  const db = (...args: string[]) => mgptBinary([...args, '--db', url()], env, undefined, dir);

  it('runs entities, a turn, keys, accounts and prompts against the database, not a file', async () => {
    const created = await db('entities', 'create', '--name', 'ada', '--instructions', 'You are Ada.', '--json');
    ok(created);
    const ada = JSON.parse(created.stdout) as { id: string };
    ok(await db('send', 'ada', 'hello from postgres'));
    const list = await db('entities', 'list', '--json');
    ok(list);
    expect((JSON.parse(list.stdout) as { data: { id: string; name: string }[] }).data.map((e) => e.name)).toEqual(['ada']);
    // Tab completion of ENTITY reads the database behind the URL, as any command does.
    const completed = await mgptBinary(['__complete', 'entities', 'a'], { ...env, MGPT_DB: url() }, undefined, dir);
    expect(completed.stdout.split('\n')).toContain('ada');
    // MGPT_DB with the URL reaches the same database.
    const viaEnv = await mgptBinary(['history', ada.id, '--json'], { ...env, MGPT_DB: url() }, undefined, dir);
    ok(viaEnv);
    expect(viaEnv.stdout).toContain('hello from postgres');

    const key = await db('keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create', '--json');
    ok(key);
    const { id: keyId } = JSON.parse(key.stdout) as { id: string };
    ok(await db('keys', 'revoke', keyId));
    const keys = await db('keys', 'list', '--json');
    ok(keys);
    expect(JSON.stringify(JSON.parse(keys.stdout))).toMatch(/revoked/i);

    ok(await db('accounts', 'create', 'acme'));
    ok(await db('accounts', 'topup', 'acme', '0.25'));
    const accounts = await db('accounts', 'list', '--json');
    ok(accounts);
    expect(accounts.stdout).toContain('acme');
    expect(accounts.stdout).toContain('0.25');

    // The `db` setting takes the URL as it is (no path resolution) and every command follows it.
    const profileEnv = cliEnv(join(dir, 'profile'));
    ok(await mgptBinary(['config', 'set', 'db', url()], profileEnv, undefined, dir));
    const viaSetting = await mgptBinary(['entities', 'list', '--json'], { ...profileEnv, MGPT_DB: '' }, undefined, dir);
    ok(viaSetting);
    expect(viaSetting.stdout).toContain(ada.id);

    ok(await mgptBinary(['prompts', 'add', 'narrator', 'You narrate.', '--db', url()], { ...env, MGPT_PROMPTS_DIR: join(dir, 'prompts') }, undefined, dir));

    // Nothing was written as a file named after the URL, in the working directory or anywhere near it.
    expect(readdirSync(dir).filter((f) => f.startsWith('postgres'))).toEqual([]);
    expect(existsSync(join(dir, 'home', 'mgpt.db'))).toBe(false);
  });

  it('exports from PostgreSQL and imports back with the same transcript', async () => {
    const tar = join(dir, 'ada.tar');
    ok(await db('export', 'ada', '-o', tar));
    const imported = await db('import', tar, '--name', 'ada-copy', '--json');
    ok(imported);
    const copy = JSON.parse(imported.stdout) as { id: string };
    const a = await db('history', 'ada', '--json');
    const b = await db('history', copy.id, '--json');
    const contents = (s: string) => (JSON.parse(s) as { data: { role: string; content: string }[] }).data.map((m) => [m.role, m.content]);
    expect(contents(b.stdout)).toEqual(contents(a.stdout));
    expect(readFileSync(tar).length).toBeGreaterThan(0);
  });

  it('refuses a malformed URL (exit 2) and an unreachable one (exit 7), creating nothing', async () => {
    const bad = await mgptBinary(['entities', 'list', '--db', 'postgres://user:%zz@host/db'], env, undefined, dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: invalid PostgreSQL URL/m);
    expect(bad.stderr).toMatch(/^hint: /m);
    const noHost = await mgptBinary(['entities', 'list', '--db', 'postgres:///db'], env, undefined, dir);
    expect(noHost.code).toBe(2);
    // Port 1 on loopback: nothing listens there.
    const down = await mgptBinary(['keys', 'list', '--db', 'postgresql://postgres:secret@127.0.0.1:1/mgpt'], env, undefined, dir);
    expect(down.code).toBe(7);
    expect(down.stderr).toMatch(/^error: cannot reach PostgreSQL/m);
    expect(down.stderr).toMatch(/^hint: /m);
    expect(down.stderr).not.toContain('secret');
    expect(down.stderr).not.toMatch(/^\s+at /m);
    expect(readdirSync(dir).filter((f) => f.startsWith('postgres'))).toEqual([]);
  });

  it('mgpt serve on an unreachable PostgreSQL exits 7 with a hint, as every other command does', async () => {
    // The server bundle keeps its own copy of the error classes: its error must still be one of ours.
    const down = await mgptBinary(['serve', '--port', '0', '--db', 'postgresql://postgres:secret@127.0.0.1:1/mgpt'], env, undefined, dir);
    expect(down.code).toBe(7);
    expect(down.stderr).toMatch(/^error: cannot reach PostgreSQL/m);
    expect(down.stderr).toMatch(/^hint: check that the server is running/m);
    expect(down.stderr).not.toContain('secret');
  });

  it('moves an entity SQLite -> PostgreSQL -> SQLite with a byte-identical transcript and the same window', async () => {
    // A small window budget, so the window has rotated into a summary by the time it moves.
    const sqliteEnv = cliEnv(join(dir, 'sqlite-a'), { MGPT_WINDOW_BUDGET: '120' });
    const created = await mgptBinary(['entities', 'create', '--name', 'mover', '--instructions', 'Keep it short.', '--json'], sqliteEnv);
    ok(created);
    for (let i = 0; i < 6; i++) ok(await mgptBinary(['send', 'mover', `message number ${i}: ${'words '.repeat(8)}`], sqliteEnv));
    const parts = (file: string) => Object.fromEntries(readTar(readFileSync(file)).map((e) => [e.name, Buffer.from(e.body)]));
    const fromSqlite = join(dir, 'from-sqlite.tar');
    ok(await mgptBinary(['export', 'mover', '-o', fromSqlite], sqliteEnv));
    ok(await db('import', fromSqlite, '--keep-id'));
    const fromPg = join(dir, 'from-pg.tar');
    ok(await db('export', 'mover', '-o', fromPg));
    const backEnv = cliEnv(join(dir, 'sqlite-b'));
    ok(await mgptBinary(['import', fromPg, '--keep-id'], backEnv));
    const again = join(dir, 'again.tar');
    ok(await mgptBinary(['export', 'mover', '-o', again], backEnv));

    const [a, b, c] = [parts(fromSqlite), parts(fromPg), parts(again)];
    expect(JSON.parse(a['window.json'].toString()).blocks.some((x: { kind: string }) => x.kind === 'summary')).toBe(true);
    expect(b['transcript.json'].equals(a['transcript.json'])).toBe(true);
    expect(c['transcript.json'].equals(a['transcript.json'])).toBe(true);
    expect(b['window.json'].equals(a['window.json'])).toBe(true);
    expect(c['window.json'].equals(a['window.json'])).toBe(true);
    // The windows the engines show agree as well.
    const shown = async (r: Promise<{ code: number | null; stdout: string; stderr: string }>) => {
      const res = await r;
      ok(res);
      return JSON.parse(res.stdout);
    };
    const w1 = await shown(mgptBinary(['window', 'mover', '--json'], sqliteEnv));
    expect(await shown(db('window', 'mover', '--json'))).toEqual(w1);
    expect(await shown(mgptBinary(['window', 'mover', '--json'], backEnv))).toEqual(w1);
  });

  // Last: it stops the cluster.
  it('serve: --pool-size, /healthz and /readyz without a key, 503 when the database goes, and a clean stop', async () => {
    const key = (await db('keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create')).stdout.trim();
    expect((await mgptBinary(['serve', '--pool-size', '0', '--db', url()], env, undefined, dir)).code).toBe(2);
    const server = spawnMgpt(['serve', '--port', '0', '--pool-size', '3', '--db', url()], env, undefined, dir);
    const base = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    const get = async (path: string, auth = false) => {
      const res = await fetch(`${base}${path}`, { headers: auth ? { authorization: `Bearer ${key}` } : {} });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'postgres' } });
    expect((await get('/v1/entities', true)).status).toBe(200);

    cluster!.stop();
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', database: 'postgres', error: expect.stringMatching(/PostgreSQL/), hint: expect.any(String) });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const list = await get('/v1/entities', true);
    expect(list.status, JSON.stringify(list.body)).toBe(503);
    expect(list.body.error).toMatch(/PostgreSQL database is unavailable/);

    server.kill('SIGTERM');
    const r = await server.result;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('mgpt serve: stopped');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('settings for PostgreSQL', () => {
  it('config list shows the URL without its password, and the pool size with its source', async () => {
    const env = cliEnv(join(dir, 'settings'), { MGPT_DB: 'postgres://mgpt:hunter2@db.internal:5432/mgpt', MGPT_POOL_SIZE: '25' });
    const list = await mgpt(['config', 'list', '--json'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain('hunter2');
    const parsed = JSON.parse(list.stdout) as { settings: Record<string, unknown>; sources: Record<string, string> };
    expect(parsed.settings.db).toBe('postgres://mgpt:***@db.internal:5432/mgpt');
    expect(parsed.settings.poolSize).toBe('25');
    expect(parsed.sources.poolSize).toBe('env MGPT_POOL_SIZE');
    expect((await mgpt(['config', 'set', 'poolSize', '0'], env)).code).toBe(2);
    expect((await mgpt(['config', 'set', 'poolSize', '4'], { ...env, MGPT_POOL_SIZE: '' })).code).toBe(0);
  });
});
