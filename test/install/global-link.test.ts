import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

// Issue 37, item 2: after the Quick start `mgpt` was not on the PATH, yet every example types it.
// The README says how (right after the Quick start) and this runs what it says, into a prefix of
// its own. --ignore-scripts: `prepare` would rebuild dist/ under the tests running beside this one.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = tempDir('mgpt-link-');

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // Without the npm_* variables `npm test` passes down (its prefix among them).
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.toLowerCase().startsWith('npm_') && v !== undefined)) as Record<string, string>;
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env: { ...clean, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(process.platform === 'win32')('mgpt on the PATH, as the README says after the Quick start', () => {
  it('the README says to npm link (or npm install -g .) right after the Quick start', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## What is here'));
    expect(quickStart).toContain('npm install && ./bin/mgpt chat\nnpm test\n');
    expect(quickStart).toMatch(/npm link/);
    expect(quickStart).toMatch(/npm install -g \./);
  });

  it('npm install -g . puts a working mgpt in the prefix bin', async () => {
    const prefix = join(dir, 'prefix');
    const install = await run('npm', ['install', '-g', '.', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund']);
    expect(install.code, install.stderr).toBe(0);
    const direct = await run(join(prefix, 'bin', 'mgpt'), ['--version']);
    expect([direct.code, direct.stdout.trim()]).toEqual([0, expect.stringMatching(/^\d+\.\d+\.\d+/)]);
    // By its bare name, as the examples type it.
    const onPath = await run('sh', ['-c', 'command -v mgpt && mgpt --version'], { PATH: `${join(prefix, 'bin')}:${process.env.PATH}` });
    expect(onPath.code, onPath.stderr).toBe(0);
    expect(onPath.stdout).toBe(`${join(prefix, 'bin', 'mgpt')}\n${direct.stdout}`);
  }, 120_000);

  it("the README's line for a prefix of one's own works as written (npm link --prefix does not on npm 11)", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('npm install -g . --prefix ~/'));
    expect(line, 'the README gives the command for a prefix of its own').toBeDefined();
    const home = join(dir, 'home');
    // As written, in a shell (so ~ is the home given here); scripts off through npm's own setting,
    // since `prepare` would rebuild dist/ under the tests running beside this one.
    const install = await run('sh', ['-c', line!], { HOME: home, npm_config_ignore_scripts: 'true' });
    expect(install.code, install.stderr).toBe(0);
    const onPath = await run('sh', ['-c', 'mgpt --version'], { PATH: `${join(home, '.local', 'bin')}:${process.env.PATH}` });
    expect([onPath.code, onPath.stdout.trim()]).toEqual([0, expect.stringMatching(/^\d+\.\d+\.\d+/)]);
  }, 120_000);
});
