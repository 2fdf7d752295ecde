import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { BIN, cliEnv } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// A pipe takes 64 KiB; Node queues the rest of a write in the process, and an exit that does not
// wait for that queue loses it. Every command here prints megabytes into a reader slower than the
// command, through the real binary, and the reader must get every byte and the command's exit code.
const dir = tempDir('mgpt-piped-');
const LIMITS = { MGPT_WINDOW_BUDGET: '1000000', MGPT_TRANSCRIPT_CAP: '100000000' };
const env = cliEnv(dir, LIMITS);
const MB = 1_000_000;
const NAME = `long-${'名'.repeat(190)}`;
const bigWords = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i} ${'字'.repeat(500)}`).join(' ');
const TURNS = 60;

/**
 * Runs bin/mgpt with a reader slower than the command: after the first chunk it takes nothing until
 * the command is done (`done` sees its stderr; by default 300 ms pass), then 64 KiB at a time.
 */
function slowlyRead(args: string[], done?: (stderr: string) => boolean): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const commandDone = async () => {
    if (!done) return new Promise((r) => setTimeout(r, 300));
    while (!done(stderr)) await Promise.race([exited, new Promise((r) => setTimeout(r, 20))]);
  };
  // The loop listens from the start: Node discards a child's unread output at its exit otherwise.
  const read = async () => {
    for await (const chunk of child.stdout) {
      chunks.push(chunk as Buffer);
      if (chunks.length === 1) await commandDone();
      else await new Promise((r) => setTimeout(r, 2));
    }
  };
  return Promise.all([read(), exited]).then(([, code]) => ({ code, stdout: Buffer.concat(chunks), stderr }));
}

/**
 * The issue's own shape, for output under what the reader above can hold: a shell pipes bin/mgpt
 * into a reader that sleeps first, so the pipe between them is the kernel's 64 KiB, and says the
 * command's exit code on stderr.
 */
async function shellPipe(args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const script = '{ "$@"; echo "exit $?" >&2; } | { sleep 0.5; cat; }';
  const child = spawn('sh', ['-c', script, 'sh', process.execPath, BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  await new Promise((r) => child.on('close', r));
  const code = /exit (\d+)\n$/.exec(stderr);
  return { code: code ? Number(code[1]) : null, stdout: Buffer.concat(chunks), stderr: stderr.replace(/exit \d+\n$/, '') };
}

beforeAll(async () => {
  const engine = openEngineSync({ db: env.MGPT_DB, windowBudget: 1_000_000, transcriptCap: 100_000_000 });
  const backend = new LocalBackend(engine);
  for (let i = 0; i < 120; i++) await backend.createEntity({ name: `big-${i}`, model: 'mgpt-1-27b', instructions: bigWords(90, 'i') });
  const long = await backend.createEntity({ name: NAME, model: 'mgpt-1-27b' });
  for (let i = 0; i < TURNS; i++) for await (const _ of backend.sendMessage(long.id, { content: `turn${i} needle ${bigWords(100, 'm')}` }));
  await engine.close();
}, 120_000);

describe('output to a slow pipe is whole before the process exits', () => {
  it('entities list --all --json: over 10 MB, parsed, exit 0', async () => {
    const r = await slowlyRead(['entities', 'list', '--all', '--json']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.length).toBeGreaterThan(10 * MB);
    expect(JSON.parse(r.stdout.toString('utf8')).data).toHaveLength(121);
  });

  it('history --all --json, --jq and the table: every message, exit 0', async () => {
    const json = await slowlyRead(['history', NAME, '--all', '--json']);
    expect([json.code, json.stderr]).toEqual([0, '']);
    expect(json.stdout.length).toBeGreaterThan(10 * MB);
    expect(JSON.parse(json.stdout.toString('utf8')).data).toHaveLength(2 * TURNS);
    const jq = await slowlyRead(['history', NAME, '--all', '--json', '--jq', '.data[] | .seq']);
    expect([jq.code, jq.stderr]).toEqual([0, '']);
    expect(jq.stdout.toString('utf8').trim().split('\n')).toEqual(Array.from({ length: 2 * TURNS }, (_, i) => String(i + 1)));
    const table = await slowlyRead(['history', NAME, '--all']);
    expect(table.code).toBe(0);
    expect(table.stdout.length).toBeGreaterThan(10 * MB);
    expect(table.stdout.toString('utf8')).toContain(`turn${TURNS - 1} needle`);
    expect(table.stdout.toString('utf8').endsWith('\n')).toBe(true);
  });

  it('export to stdout: the JSON and the tar are whole', async () => {
    const json = await slowlyRead(['export', NAME, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(json.stdout.length).toBeGreaterThan(10 * MB);
    expect(JSON.parse(json.stdout.toString('utf8')).transcript).toHaveLength(2 * TURNS);
    const tar = await slowlyRead(['export', NAME]);
    expect(tar.code).toBe(0);
    // A tar ends with two 512-byte blocks of zeros and is a whole number of blocks.
    expect(tar.stdout.length % 512).toBe(0);
    expect(tar.stdout.subarray(-1024).every((b) => b === 0)).toBe(true);
    expect(tar.stdout.length).toBeGreaterThan(10 * MB);
  });

  it('search --json: every hit (over 64 KiB), into a reader that starts late', async () => {
    const r = await shellPipe(['search', 'needle', '--limit', '100', '--json']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.length).toBeGreaterThan(64 * 1024);
    expect(JSON.parse(r.stdout.toString('utf8')).data).toHaveLength(100);
  });

  it("a failing command keeps its exit code after megabytes of output (batch: a job's entity is missing)", async () => {
    const jobs = Array.from({ length: 100 }, (_, i) => ({ id: `j${i}`, entity: NAME, input: `again${i} ${bigWords(100, 'b')}` }));
    jobs.push({ id: 'missing', entity: '00000000-0000-4000-8000-000000000000', input: 'hello' });
    const file = join(dir, 'jobs.jsonl');
    writeFileSync(file, jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');
    const r = await slowlyRead(['batch', file], (stderr) => stderr.includes(' jobs: '));
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBeGreaterThan(10 * MB);
    const results = r.stdout.toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; ok: boolean });
    expect(results.map((x) => [x.id, x.ok]).sort()).toEqual(jobs.map((j) => [j.id, j.id !== 'missing']).sort());
    expect(r.stderr).toMatch(/101 of 101 jobs: 100 ok, 1 failed/);
  });
});
