import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-readme-');
// The README's tour points to the user's guide, whose first block is the everyday commands.
const GUIDE = readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8');

/** The first sh block after a heading of the user's guide, as written there. */
function block(heading: string): string {
  const at = GUIDE.indexOf(`\n${heading}\n`);
  expect(at, `docs/guide.md has no heading ${heading}`).toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)```/.exec(GUIDE.slice(at));
  return m![1];
}

describe("the user's guide's Everyday commands (docs/guide.md)", () => {
  it('run top to bottom as a script, as written', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'mgpt'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'mgpt'), 0o755);
    const work = join(dir, 'work');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'persona.md'), 'You are Bob, who likes boats.\n');
    writeFileSync(join(work, 'question.txt'), 'Is 1 a prime?\n');
    writeFileSync(join(work, 'notes.md'), '- primes below 20\n- 91 = 7 x 13\n');
    const env = cliEnv(dir, { PATH: `${bin}:${process.env.PATH}` });
    const script = `set -euo pipefail\n${block('## Everyday commands')}`;
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn('bash', ['-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => resolve({ code, out, err }));
    });
    expect(r.code, r.err).toBe(0);
    const names = JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data.map((e: { name: string }) => e.name);
    expect(names.sort()).toEqual(['ada (2)', 'ada-copy', 'bob']); // the import beside its original is numbered
    const copy = JSON.parse((await mgpt(['entities', 'show', 'ada-copy', '--json'], env)).stdout);
    expect(copy.transcript.messages).toBe(14); // six sends and ask -c, each a message and its reply
  });
});
