import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { runCli } from '../../src/cli/run.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/mgpt', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * An isolated environment: its own config dir, data dir and database, no colour. `dir` is
 * created: an explicit database path must be in a directory that exists.
 */
export function cliEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k]!;
  return {
    ...env,
    MGPT_CONFIG_DIR: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'data'),
    MGPT_DB: join(dir, 'mgpt.db'),
    NO_COLOR: '1',
    ...extra,
  };
}

/** Starts bin/mgpt; the caller decides when to wait or kill. */
export function spawnMgpt(args: string[], env: Record<string, string>, input?: string, cwd?: string): ChildProcess & { result: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  if (input !== undefined) child.stdin.end(input);
  else child.stdin.end();
  const result = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return Object.assign(child, { result });
}

/**
 * Resolves at the child's first output on stdout; a child that exits before it fails the test
 * with what it printed, instead of leaving the test to wait for its timeout.
 */
export function firstOutput(child: ReturnType<typeof spawnMgpt>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    void child.result.then((r) => reject(new Error(`mgpt exited (code ${r.code}, signal ${r.signal}) before any output; stderr: ${r.stderr}`)));
  });
}

/** Runs the real bin/mgpt to completion, in its own process. */
export function mgptBinary(args: string[], env: Record<string, string>, input?: string, cwd?: string): Promise<CliResult> {
  return spawnMgpt(args, env, input, cwd).result;
}

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * Runs a command line in-process (gh's iostreams.Test()): the same runCli the binary's entry
 * calls, with buffers for stdout and stderr, stdin from `input` (empty when none) and no
 * terminal, so most command tests skip a Node start each. What needs a process of its own
 * (signals, the bundle, umask, another user) uses spawnMgpt or mgptBinary.
 */
export async function mgpt(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => ({ write: (c: string | Uint8Array) => (into.push(Buffer.from(c)), true) });
  const code = await runCli(args, {
    io: { stdout: sink(out), stderr: sink(err), stdin: Readable.from(input === undefined ? [] : [input]), stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false },
    env,
    version: VERSION,
    signal: new AbortController().signal,
  });
  return { code, signal: null, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
