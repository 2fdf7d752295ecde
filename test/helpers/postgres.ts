import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { didNotRun } from './tool.js';

/** A throwaway PostgreSQL cluster for one test file. */
export interface PgCluster {
  /** A database of its own, created for the caller: `postgres://postgres@127.0.0.1:<port>/<db>`. */
  url: string;
  /** Another fresh database on the same cluster (for tests that need a blank schema). */
  createDatabase(name: string): string;
  /** Fault tests: stops the server (`pg_ctl stop -m fast|immediate`) and starts it again on the same port. */
  halt(mode: 'fast' | 'immediate'): void;
  start(): void;
  /** The postmaster's and its children's process ids (a bench reads their CPU from /proc). */
  pids(): number[];
  /** Fault tests: SIGSTOP (freeze) or SIGCONT (thaw) the postmaster and every backend. */
  signalAll(signal: 'SIGSTOP' | 'SIGCONT'): void;
  stop(): void;
}

export interface ClusterOptions {
  /**
   * Fault tests that crash the server: an acknowledged commit must survive the crash (the WAL is
   * written before the commit returns; fsync stays off, since the machine itself does not crash).
   */
  crashSafeCommits?: boolean;
  /** Server settings beside the defaults, each `name=value` (a bench's `shared_preload_libraries=pg_stat_statements`). */
  settings?: string[];
}

/**
 * Starts a cluster in a temp dir: initdb (trust auth, no fsync: the data is thrown away), then
 * pg_ctl on a free port on 127.0.0.1 with its unix socket in the same dir. As root, PostgreSQL
 * refuses to run, so the cluster belongs to the `postgres` user. Where PostgreSQL is missing or
 * cannot start, says so loudly and returns null (the caller skips), except under CI (`CI` or
 * `MGPT_TEST_REQUIRE_POSTGRES` set), where it throws.
 */
export async function startPostgres(what: string, opts: ClusterOptions = {}): Promise<PgCluster | null> {
  const bin = findBinDir();
  if (!bin) return unavailable(what, 'PostgreSQL is not installed (apt-get install postgresql; .ci/run does)');
  try {
    return await startCluster(bin, opts);
  } catch (err) {
    return unavailable(what, `PostgreSQL could not be started: ${(err as Error).message.split('\n')[0]}`);
  }
}

function unavailable(what: string, why: string): null {
  // .ci/run installs PostgreSQL and says so with MGPT_TEST_REQUIRE_POSTGRES; hosted CI sets CI.
  if (process.env.CI || process.env.MGPT_TEST_REQUIRE_POSTGRES) {
    throw new Error(`${what}: ${why} (CI must run the PostgreSQL tests)`);
  }
  didNotRun(what, why);
  return null;
}

/** The newest /usr/lib/postgresql/<v>/bin, or pg_config --bindir. */
function findBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(root, versions[0], 'bin');
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    return existsSync(join(dir, 'pg_ctl')) ? dir : null;
  } catch {
    return null;
  }
}

async function startCluster(bin: string, o: ClusterOptions): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mgpt-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (args: string[]) => {
    const cmd = args.map(shellQuote).join(' ');
    if (asRoot) execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', cmd], { stdio: 'pipe' });
    else execFileSync('/bin/sh', ['-c', cmd], { stdio: 'pipe' });
  };
  try {
    if (asRoot) chownSync(dir, pgUid(), pgGid());
    const data = join(dir, 'data');
    run([join(bin, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
    const port = await freePort();
    // Without synchronous_commit, a crash (`pg_ctl stop -m immediate`) loses commits already acknowledged.
    const commit = o.crashSafeCommits ? '' : ' -c synchronous_commit=off';
    const extra = (o.settings ?? []).map((s) => ` -c ${s}`).join('');
    const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${commit} -c full_page_writes=off${extra}`;
    const start = () => run([join(bin, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', opts, 'start']);
    start();
    const base = `postgres://postgres@127.0.0.1:${port}`;
    const createDatabase = (name: string) => {
      run([join(bin, 'createdb'), '-h', dir, '-p', String(port), '-U', 'postgres', name]);
      return `${base}/${name}`;
    };
    let stopped = false;
    const cluster: PgCluster = {
      url: createDatabase('mgpt_test'),
      createDatabase,
      halt: (mode) => run([join(bin, 'pg_ctl'), '-D', data, '-m', mode, '-w', 'stop']),
      start,
      pids() {
        const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        return [postmaster, ...execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number)];
      },
      signalAll(signal) {
        const [postmaster, ...children] = cluster.pids();
        // Thaw the postmaster last and freeze it first, so it never sees a half-frozen family.
        for (const pid of signal === 'SIGSTOP' ? [postmaster, ...children] : [...children, postmaster]) {
          try {
            process.kill(pid, signal);
          } catch {
            // A backend that ended meanwhile.
          }
        }
      },
      stop() {
        if (stopped) return;
        stopped = true;
        try {
          // A fault test that failed midway may have left it frozen: pg_ctl would wait on it.
          try {
            cluster.signalAll('SIGCONT');
          } catch {
            // Not running.
          }
          run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
    return cluster;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as Error & { stderr?: Buffer };
    throw new Error(`${e.message}${e.stderr ? `: ${e.stderr.toString().trim()}` : ''}`);
  }
}

function pgUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}

function pgGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A port free right now on 127.0.0.1 (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
