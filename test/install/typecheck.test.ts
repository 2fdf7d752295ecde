import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = tempDir('mgpt-typecheck-');

function node(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

/** The project as a fresh clone has it after `npm ci`: every dependency, but not the optional node-llama-cpp. */
function cloneWithoutLlama(): string {
  const cwd = join(dir, 'clone');
  for (const f of ['src', 'test', 'bench', 'scripts', 'tsconfig.json', 'package.json']) cpSync(join(ROOT, f), join(cwd, f), { recursive: true });
  mkdirSync(join(cwd, 'node_modules'));
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'node-llama-cpp' || entry === '@node-llama-cpp') continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(cwd, 'node_modules', entry));
  }
  return cwd;
}

// The type check itself runs once, in pretest (npm test) and in CI; these check which files it
// takes, without checking the types a second time.
describe('npm run typecheck', () => {
  it('on a machine without node-llama-cpp, checks the llama provider against the stand-in and says so', async () => {
    const r = await node(['scripts/typecheck.mjs', '--listFilesOnly'], cloneWithoutLlama());
    expect(r.out).toContain('typecheck: node-llama-cpp is not installed');
    expect(r.out).toContain('scripts/no-llama/node-llama-cpp.d.ts');
    expect(r.out).toContain('src/providers/llama/llama-chat.ts');
    expect([r.code, r.out]).toEqual([0, expect.not.stringMatching(/error TS/)]);
  });

  it('uses the real node-llama-cpp types wherever the library is installed: the stand-in is not part of tsconfig.json', async () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await node([tsc, '--listFilesOnly'], ROOT);
    expect(r.code).toBe(0);
    expect(r.out).toContain('src/providers/llama/llama-chat.ts');
    expect(r.out).not.toContain('no-llama');
  });
});
