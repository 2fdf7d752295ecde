import { execFile, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, mkdtempSync, rmSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { tarHeader } from '../../src/core/archive/tar.js';
// The real binary throughout: these faults are the process's own (umask, another user, a full tmpfs whose
// files must be closed before it is unmounted).
import { BIN, cliEnv, mgptBinary as mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { didNotRun } from '../helpers/tool.js';

/** The real binary fed hostile files, names and environments. */
const dir = tempDir();
const env = cliEnv(dir);

describe('import reads a bounded amount', () => {
  it('mgpt import /dev/zero --from mgpt stops at the 64 MiB an export can be, with a clear error', async () => {
    const r = await mgpt(['import', '/dev/zero', '--from', 'mgpt'], env);
    expect(r.stderr).toMatch(/^error: import: the export is larger than 64 MiB, the most an export can be\nhint: /);
    expect(r.code).toBe(2);
    expect((await mgpt(['entities', 'list', '--json'], env)).stdout).toMatch(/"data": \[\]/);
  });

  it('mgpt import /dev/zero (no tar, no manifest: read as a chat export) stops at its first byte, with a clear error', async () => {
    const r = await mgpt(['import', '/dev/zero'], env);
    expect(r.stderr).toMatch(/^error: the export: expected a JSON array of conversations \(at byte 0\)\nhint: /);
    expect(r.code).toBe(2);
    expect((await mgpt(['entities', 'list', '--json'], env)).stdout).toMatch(/"data": \[\]/);
  });

  it('a tar header that claims a huge member is refused, not allocated', async () => {
    const file = join(dir, 'huge.tar');
    writeFileSync(file, Buffer.concat([tarHeader('manifest.json', 8 * 1024 ** 3 - 1, 0), Buffer.alloc(512)]));
    const r = await mgpt(['import', file], env);
    expect(r.stderr).toMatch(/^error: import: not a valid export archive: archive is truncated inside "manifest.json"/);
    expect(r.code).toBe(2);
  });
});

describe('stored values with terminal escapes', () => {
  const evil = 'ada\x1b[31mRED\x1b]0;owned\x07\x9b2J\r\x01end';
  const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

  it('are printed without control characters in TSV, show and history; --json keeps the exact value', async () => {
    const id = (await mgpt(['entities', 'create', '--name', evil, '--instructions', `be\x1b[2Jnice\nline two`], env)).stdout.trim();
    expect((await mgpt(['send', id, `hi\x1b[31m there\ttab\nnext`], env)).code).toBe(0);
    const list = await mgpt(['entities', 'list'], env);
    expect(list.code).toBe(0);
    const row = list.stdout.split('\n').find((l) => l.startsWith(id))!;
    expect(row.split('\t')[1]).toBe('adaRED2Jend');
    const show = await mgpt(['entities', 'show', id], env);
    expect(show.stdout).not.toMatch(CONTROL);
    expect(show.stdout).toMatch(/^name {8}adaRED2Jend$/m);
    expect(show.stdout).toMatch(/^benice\nline two$/m);
    const history = await mgpt(['history', id], env);
    expect(history.stdout).not.toMatch(CONTROL);
    expect(history.stdout).toContain('hi there\ttab\nnext');
    const window = await mgpt(['window', id], env);
    expect(window.stdout).not.toMatch(CONTROL);
    expect(JSON.parse((await mgpt(['entities', 'show', id, '--json'], env)).stdout).name).toBe(evil);
    const missing = await mgpt(['entities', 'show', `nobody\x1b[31m`], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).not.toMatch(CONTROL);
  });
});

describe('model replies with terminal escapes', () => {
  // The echo provider replies with the message: a reply holding an OSC 52 clipboard write, a window
  // title, a hyperlink, clear-screen and C1 controls, as a hostile or confused model could send.
  const reply = 'ok\x1b]52;c;b3duZWQ=\x07 \x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x9b2Jdone';
  const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

  it.each([['streamed', []], ['--no-stream', ['--no-stream']], ['ask', ['ask']]])('reach the terminal cleaned (%s); --json keeps them', async (_, extra) => {
    const args = extra[0] === 'ask' ? ['ask', reply] : ['send', (await mgpt(['entities', 'create', '--name', `osc${extra.join('')}`], env)).stdout.trim(), reply, ...extra];
    const r = await mgpt(args, env);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stdout).toContain('ok');
    expect(r.stdout).toContain('done');
    const json = await mgpt([...args, '--json'], env);
    expect(json.stdout).toContain('\\u001b]52;c;');
  });
});

describe('stdin a caller leaves open', () => {
  it('mgpt send ENTITY TEXT does not wait for a silent pipe that never ends; data piped in is still read', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'open-stdin'], env)).stdout.trim();
    // stdin a pipe this test never writes to nor closes (as a parent process or CI runner leaves it).
    const child = spawn(process.execPath, [BIN, 'send', id, 'hello'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => (child.kill('SIGKILL'), resolve(-1)), 20_000);
      child.on('exit', (c) => (clearTimeout(t), resolve(c)));
    });
    expect(code).toBe(0);
    expect(out).toBe('hello\n');
    // A pipe with data is context before TEXT, as before.
    const piped = await mgpt(['send', id, 'the question'], env, 'some notes\n');
    expect(piped.stdout).toBe('some notes\n\nthe question\n');
  });
});

describe('file modes under umask 000', () => {
  it('the database (and -wal, -shm) is 0600; the config and data directories are 0700', async () => {
    const home = join(dir, 'umask');
    const e = cliEnv(home);
    delete (e as Record<string, string>).MGPT_DB; // the default data directory
    const sh = (cmd: string) => execFileSync('sh', ['-c', `umask 000; ${cmd}`], { env: e, encoding: 'utf8' });
    sh(`"${process.execPath}" "${BIN}" config set engine.windowBudget 500`);
    const id = sh(`"${process.execPath}" "${BIN}" entities create --name perms`).trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const db = join(home, 'data', 'mgpt', 'mgpt.db');
    // A reader stays open while another process writes, so -wal and -shm are there to be checked.
    const Database = (await import('better-sqlite3')).default;
    const held = new Database(db);
    held.prepare('SELECT count(*) FROM entities').get(); // a WAL reader: the writer's close keeps -wal and -shm
    sh(`"${process.execPath}" "${BIN}" send ${id} hello`);
    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    expect(mode(join(home, 'config'))).toBe('700');
    expect(mode(join(home, 'config', 'config.json'))).toBe('600');
    expect(mode(join(home, 'data', 'mgpt'))).toBe('700');
    expect(mode(db)).toBe('600');
    expect(mode(`${db}-wal`)).toBe('600');
    expect(mode(`${db}-shm`)).toBe('600');
    held.close();
  });
});

describe('database and output paths', () => {
  it('an explicit --db in a missing directory is a usage error with a hint, not a new directory or a hang', async () => {
    for (const path of [join(dir, 'no', 'such', 'x.db'), '/proc/self/nope/x.db']) {
      const r = await mgpt(['--db', path, 'entities', 'list'], env);
      expect(r.stderr, path).toMatch(/^error: cannot open database .*: directory .* does not exist\nhint: create it first/);
      expect(r.code, path).toBe(2);
    }
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('export -o into a missing directory is a clear usage error, no stack trace', async () => {
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const r = await mgpt(['export', id, '-o', '/missing/dir/x.tar'], env);
    expect(r.stderr).toBe('error: cannot write /missing/dir/x.tar: its directory does not exist\nhint: create the directory first, or pick another path\n');
    expect(r.code).toBe(2);
  });
});

/**
 * A real full disk: a 1 MiB tmpfs, room for the schema (about 270 KB) and its WAL but not for six
 * 240 KB turns (needs root and mount, as in this project's CI container).
 */
const tiny = join(dir, 'tiny');
const mounted = (() => {
  try {
    mkdirSync(tiny);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', tiny], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!mounted) didNotRun('THE FULL-DISK TESTS', 'a tmpfs cannot be mounted here (they need root and mount)');
afterAll(() => {
  if (mounted) execFileSync('umount', [tiny]);
});

/** Takes whatever room is left on the small file system at `dir`, however much that is. */
function fillUp(dir: string): void {
  for (const size of [64 * 1024, 512, 1]) {
    try {
      for (let i = 0; i < 1 << 16; i++) appendFileSync(join(dir, 'filler'), Buffer.alloc(size));
    } catch {
      // ENOSPC: nothing of this size fits any more
    }
  }
}

describe.skipIf(!mounted)('a full disk', () => {
  it('says the disk is full (exit 1, with a hint) for a turn and for an export', async () => {
    const e = cliEnv(dir, { MGPT_DB: join(tiny, 'm.db'), MGPT_WINDOW_BUDGET: '1000000' });
    const id = (await mgpt(['entities', 'create', '--name', 'full'], e)).stdout.trim();
    const big = 'hello '.repeat(40_000);
    let r = await mgpt(['send', id, '-'], e, big);
    for (let i = 0; i < 5 && r.code === 0; i++) r = await mgpt(['send', id, '-'], e, big);
    expect(r.stderr).toMatch(/^error: the disk is full\nhint: free some space/m);
    expect(r.stderr).not.toMatch(/SQLITE_FULL|at .*\.js/);
    expect(r.code).toBe(1);
    const list = await mgpt(['entities', 'list'], e);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    // Whatever room the failed turn left is taken, so an export (from a database elsewhere) cannot fit either.
    fillUp(tiny);
    const other = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const x = await mgpt(['export', other, '-o', join(tiny, 'x.tar')], env);
    expect(x.stderr).toMatch(/^error: cannot write .*x\.tar: the disk is full\nhint: /);
    expect(x.code).toBe(1);
    // With not a byte left, SQLite cannot even create its shared memory to read: an I/O error, said
    // plainly. (A failed write may leave the -shm file behind, and then reads work; with no process
    // open it can go, SQLite rebuilds it from the WAL, and the room it held is taken too.)
    rmSync(join(tiny, 'm.db-shm'), { force: true });
    fillUp(tiny);
    const stuck = await mgpt(['entities', 'list'], e);
    expect(stuck.stderr).toMatch(/^error: a disk I\/O error on the database \(SQLITE_IOERR\w*\)\nhint: check that its disk is not full/);
    expect(stuck.code).toBe(1);
  });
});

describe('configuration errors are usage errors (exit 2)', () => {
  it('a bad backend, number, provider or a remote backend without a URL', async () => {
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
      ['--backend', ['--backend', 'weird', 'entities', 'list'], {}, /backend must be local or remote, got "weird"/],
      ['MGPT_WINDOW_BUDGET', ['entities', 'list'], { MGPT_WINDOW_BUDGET: 'abc' }, /MGPT_WINDOW_BUDGET must be a positive integer/],
      ['MGPT_LEASE_TTL_MS', ['entities', 'list'], { MGPT_LEASE_TTL_MS: '-1' }, /MGPT_LEASE_TTL_MS must be a positive integer/],
      ['MGPT_PROVIDER', ['send', id, 'hi'], { MGPT_PROVIDER: 'bogus' }, /unknown provider "bogus"/],
      ['remote without URL', ['entities', 'list'], { MGPT_BACKEND: 'remote' }, /no entities URL\nhint: /],
    ];
    for (const [name, args, extra, message] of cases) {
      const r = await mgpt(args, { ...env, ...extra });
      expect(r.stderr, name).toMatch(message);
      expect(r.code, name).toBe(2);
    }
  });
});

/** Root ignores file modes, so the read-only run drops to the nobody user (setpriv, as root). */
const asNobody = process.getuid?.() === 0 && (() => {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

/** Whether node, run as nobody from `/`, ends well with these arguments. */
function nobodyRuns(args: string[]): boolean {
  try {
    execFileSync('setpriv', [...NOBODY, process.execPath, ...args], { cwd: '/', stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * The binary as nobody can run it: this checkout's when nobody can reach it, else a copy of what
 * `entities` needs (the launcher, the bundle, SQLite's addon) in a world-readable temp directory.
 * A checkout under a directory closed to others (a mkdtemp folder, /root) is unreadable to nobody,
 * and every run failed before it read the database. A reason instead when even that cannot work.
 */
function binaryForNobody(): { bin: string } | { why: string } {
  if (!nobodyRuns(['-e', `require('node:fs').accessSync(${JSON.stringify(tmpdir())}, 1)`])) {
    return { why: `nobody cannot enter the temp directory ${tmpdir()} (set TMPDIR to one it can, like /tmp)` };
  }
  if (nobodyRuns([BIN, '--version'])) return { bin: BIN };
  const checkout = dirname(dirname(BIN));
  const copy = tempDir('mgpt-nobody-bin-');
  chmodSync(copy, 0o755); // mkdtemp makes it 0700, closed to nobody
  for (const part of ['bin', 'dist', 'node_modules/better-sqlite3/package.json', 'node_modules/better-sqlite3/build/Release/better_sqlite3.node']) {
    cpSync(join(checkout, part), join(copy, part), { recursive: true });
  }
  execFileSync('chmod', ['-R', 'a+rX', copy]);
  const bin = join(copy, 'bin', 'mgpt');
  return nobodyRuns([bin, '--version']) ? { bin } : { why: `nobody cannot run mgpt, neither from ${checkout} nor from a copy in ${copy}` };
}

const forNobody = asNobody ? binaryForNobody() : { why: 'it runs the binary as nobody, which needs root and setpriv' };
if ('why' in forNobody) didNotRun('THE READ-ONLY DATABASE TEST', forNobody.why);
describe.skipIf('why' in forNobody)('a read-only database file (0400)', () => {
  it('still serves reads; a write says the database is read-only, with a hint', async () => {
    const bin = (forNobody as { bin: string }).bin;
    // Removed by the test itself: an afterAll registered while a test runs (tempDir's) never runs.
    const home = mkdtempSync(join(tmpdir(), 'mgpt-readonly-'));
    onTestFinished(() => rmSync(home, { recursive: true, force: true }));
    chmodSync(home, 0o755); // mkdtemp makes it 0700, closed to nobody
    const e = cliEnv(home);
    const id = (await mgpt(['entities', 'create', '--name', 'frozen'], e)).stdout.trim();
    execFileSync('chown', ['-R', '65534:65534', home]);
    execFileSync('chmod', ['0400', e.MGPT_DB]);
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile('setpriv', [...NOBODY, process.execPath, bin, ...args], { cwd: '/', env: { ...e, HOME: home } }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code) : 0, stdout, stderr }),
        );
        child.stdin?.end();
      });
    const list = await run(['entities', 'list']);
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(new RegExp(`^${id}\tfrozen\t`));
    expect(list.code).toBe(0);
    const write = await run(['entities', 'create']);
    expect(write.stderr).toBe(
      'error: the database is read-only\nhint: reading commands still work; to write, make the database file and its directory writable (or pass another --db)\n',
    );
    expect(write.code).toBe(1);
  });
});

describe('entities delete', () => {
  it('without --yes and without a terminal to ask on, refuses (exit 2, hint) and deletes nothing', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'keep-me'], env)).stdout.trim();
    const r = await mgpt(['entities', 'delete', id], env, 'y\n');
    expect(r.stderr).toBe(
      `error: not deleting ${id} without confirmation: this is not an interactive terminal\nhint: pass --yes to delete it: mgpt entities delete ${id} --yes\n`,
    );
    expect(r.code).toBe(2);
    // By its name: the refusal names it so, not by the id the name resolved to.
    const named = await mgpt(['entities', 'delete', 'keep-me'], env, 'y\n');
    expect(named.stderr).toBe('error: not deleting keep-me without confirmation: this is not an interactive terminal\nhint: pass --yes to delete it: mgpt entities delete keep-me --yes\n');
    expect((await mgpt(['entities', 'show', id, '--json'], env)).code).toBe(0);
    const yes = await mgpt(['entities', 'delete', id, '--yes'], env);
    expect([yes.code, yes.stderr]).toEqual([0, `deleted entity ${id}\n`]);
    expect((await mgpt(['entities', 'show', id], env)).code).toBe(4);
  });
});
