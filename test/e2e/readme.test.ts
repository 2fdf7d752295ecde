import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-readme-');
// The README's tour points to the user's guide, whose first block is the everyday commands.
const GUIDE = readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8');

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The first sh block after a heading of a page, as written there. */
function block(heading: string, page = GUIDE): string {
  const at = page.indexOf(`\n${heading}\n`);
  expect(at, `no heading ${heading}`).toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)```/.exec(page.slice(at));
  return m![1];
}

/** Runs `script` with bash in `work`, `mgpt` on the PATH as the built binary. */
function runScript(script: string, work: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

function mgptOnPath(at: string): Record<string, string> {
  const bin = join(at, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'mgpt'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'mgpt'), 0o755);
  return cliEnv(at, { PATH: `${bin}:${process.env.PATH}` });
}

describe("the README's tour of ten commands", () => {
  it('runs as written, but for mgpt serve (which serves until stopped)', async () => {
    const at = join(dir, 'tour');
    const env = mgptOnPath(at);
    const work = join(at, 'work');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'jobs.jsonl'), '{"id":"q1","entity":"ada","input":"Summarize our week."}\n');
    const lines = block('## A tour of ten commands', README).trimEnd().split('\n');
    expect(lines).toHaveLength(10);
    expect(lines.at(-1)).toMatch(/^mgpt serve /);
    const r = await runScript(lines.slice(0, -1).join('\n'), work, env);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(readFileSync(join(work, 'results.jsonl'), 'utf8'))).toMatchObject({ id: 'q1', ok: true });
  });
});

describe("the README's MCP line", () => {
  it('prints the `claude mcp add` line it promises, as written', async () => {
    const line = /`(mgpt mcp --print-config claude-code)`/.exec(README)![1]!;
    const at = join(dir, 'mcp-line');
    const r = await runScript(line, at, mgptOnPath(at));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^claude mcp add --transport stdio mgpt -- \S+ \S+ mcp\n$/);
    expect(README).toContain('[MCP](docs/mcp.md)');
  });
});

describe("the user's guide's Everyday commands (docs/guide.md)", () => {
  it('run top to bottom as a script, as written', async () => {
    const env = mgptOnPath(dir);
    const work = join(dir, 'work');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'persona.md'), 'You are Bob, who likes boats.\n');
    writeFileSync(join(work, 'question.txt'), 'Is 1 a prime?\n');
    writeFileSync(join(work, 'notes.md'), '- primes below 20\n- 91 = 7 x 13\n');
    const r = await runScript(block('## Everyday commands'), work, env);
    expect(r.code, r.err).toBe(0);
    const names = JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data.map((e: { name: string }) => e.name);
    expect(names.sort()).toEqual(['ada (2)', 'ada-copy', 'bob']); // the import beside its original is numbered
    const copy = JSON.parse((await mgpt(['entities', 'show', 'ada-copy', '--json'], env)).stdout);
    expect(copy.transcript.messages).toBe(14); // six sends and ask -c, each a message and its reply
  });
});
