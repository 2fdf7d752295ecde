import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// bin/mgpt compiles dist/cli.cjs with V8's code cache beside it (issue 13: the bundle's compile was
// most of what a plain command costs over bare node). Each test runs a copy of the built package, so
// it can break the cache without touching the checkout's dist/.
const root = fileURLToPath(new URL('../..', import.meta.url));
const base = tempDir('mgpt-code-cache-');
let pkg: string;
let env: Record<string, string>;
let n = 0;

beforeEach(() => {
  pkg = join(base, `pkg${n++}`);
  mkdirSync(pkg);
  cpSync(join(root, 'bin'), join(pkg, 'bin'), { recursive: true });
  cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.v8cache') });
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
  env = cliEnv(join(pkg, 'home'));
});

function run(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(pkg, 'bin', 'mgpt'), ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, signal: null, stdout, stderr }),
    );
    child.stdin!.end();
  });
}

const cache = () => join(pkg, 'dist', 'cli.cjs.v8cache');
const header = () => readFileSync(cache()).subarray(0, readFileSync(cache()).indexOf(10) + 1).toString();

describe('the V8 code cache of the CLI bundle', () => {
  it('is written beside the bundle after the first command, then used as it is', async () => {
    expect(existsSync(cache())).toBe(false);
    const id = (await run(['entities', 'create', '--name', 'ada'])).stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const size = statSync(join(pkg, 'dist', 'cli.cjs')).size;
    expect(header()).toMatch(new RegExp(`^mgpt-v8cache ${size} \\d+\\n$`));
    expect(readFileSync(cache()).length).toBeGreaterThan(10_000);
    const before = statSync(cache());

    const sent = await run(['send', id, 'hi']);
    expect(sent).toMatchObject({ code: 0, stdout: 'hi\n' });
    // Accepted, so not written again (a rejected cache is replaced by a rename: a new inode).
    expect(statSync(cache()).ino).toBe(before.ino);
    expect(statSync(cache()).mtimeMs).toBe(before.mtimeMs);
    expect(readdirSync(join(pkg, 'dist')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps exit codes, error messages and dynamic imports (the config store) of the bundle', async () => {
    await run(['--version']);
    expect(existsSync(cache())).toBe(true);
    const missing = await run(['entities', 'show', 'nope']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('error: no entity "nope"');
    const usage = await run(['bogus']);
    expect(usage.code).toBe(2);
    expect(await run(['config', 'set', 'models.x.baseUrl', 'http://127.0.0.1:9/v1'])).toMatchObject({ code: 0 });
    expect(await run(['config', 'get', 'models.x.baseUrl'])).toMatchObject({ code: 0, stdout: 'http://127.0.0.1:9/v1\n' });
  });

  it('is replaced when the bundle changed, even at the same length', async () => {
    await run(['--version']);
    const old = header();
    // Same length, new content: V8 itself would only compare the length.
    const bundle = join(pkg, 'dist', 'cli.cjs');
    const src = readFileSync(bundle, 'utf8');
    writeFileSync(bundle, src.replace('"use strict";', "'use strict';"));
    expect(statSync(bundle).size).toBe(Buffer.byteLength(src));
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(header()).not.toBe(old);
    expect(header()).toMatch(new RegExp(`^mgpt-v8cache ${statSync(bundle).size} ${statSync(bundle, { bigint: true }).mtimeNs}\\n$`));
  });

  it('is replaced when V8 rejects it, and a corrupt one changes nothing for the command', async () => {
    await run(['--version']);
    const h = header();
    writeFileSync(cache(), Buffer.concat([Buffer.from(h), Buffer.alloc(5000, 7)]));
    const r = await run(['--version']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(cache()).length).toBeGreaterThan(10_000);
    expect(readFileSync(cache()).subarray(h.length, h.length + 5000).equals(Buffer.alloc(5000, 7))).toBe(false);
  });

  it('runs without it when it cannot be written', async () => {
    // A directory where the cache would go: the rename fails as it would on a read-only install.
    mkdirSync(cache());
    writeFileSync(join(cache(), 'keep'), '');
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(readdirSync(join(pkg, 'dist')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('does not hide where an error in the bundle comes from', async () => {
    appendFileSync(join(pkg, 'dist', 'cli.cjs'), '\nnull.boom;\n');
    const r = await run(['--version']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(join(pkg, 'dist', 'cli.cjs'));
    expect(r.stderr).toContain('TypeError');
  });
});
