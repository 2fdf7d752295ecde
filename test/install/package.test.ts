import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

// The package as a user gets it: `npm pack`, then `npm install -g` of the tarball into a prefix of
// its own, and mgpt run from there (no checkout, no devDependencies). The tarball is packed from the
// dist/ that pretest built (--ignore-scripts: rebuilding dist/ here would pull it from under the
// tests running beside this one). better-sqlite3's install script would compile its addon (about 2
// minutes here, without a prebuilt binary); it is skipped, and the addon this checkout compiled is
// copied into place instead, which is what that script would have produced on this machine.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = tempDir('mgpt-package-');
const prefix = join(dir, 'prefix');
const LIMIT_MB = 40;

function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { cwd: opts.cwd ?? dir, env: { ...cleanEnv(), ...opts.env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(opts.input ?? '');
  });
}

/** Without the npm_* variables `npm test` passes down (its prefix among them). */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !k.toLowerCase().startsWith('npm_') && v !== undefined)) as Record<string, string>;
}

function sizeOf(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, e) => n + sizeOf(join(path, e)), 0);
}

const installed = join(prefix, process.platform === 'win32' ? '' : 'lib', 'node_modules', 'mgpt');
const bin = join(prefix, 'bin', 'mgpt');
const home = join(dir, 'home');
const env = { MGPT_CONFIG_DIR: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), HOME: home, NO_COLOR: '1' };

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT });
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = join(dir, packed.stdout.trim().split('\n').at(-1)!);
  const install = await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball]);
  expect(install.code, install.stderr).toBe(0);
  const addon = join('build', 'Release', 'better_sqlite3.node');
  mkdirSync(join(installed, 'node_modules', 'better-sqlite3', 'build', 'Release'), { recursive: true });
  copyFileSync(join(ROOT, 'node_modules', 'better-sqlite3', addon), join(installed, 'node_modules', 'better-sqlite3', addon));
}, 180_000);
afterAll(() => undefined);

describe.skipIf(process.platform === 'win32')('the packed package, installed globally from its tarball', () => {
  it(`installs only what it loads, under ${LIMIT_MB} MB, with its LICENSE and the docs the README links, and no stale code cache`, () => {
    const mb = sizeOf(installed) / 1024 / 1024;
    console.log(`mgpt installed from its tarball: ${mb.toFixed(1)} MB (${readdirSync(join(installed, 'node_modules')).join(', ')})`);
    expect(mb).toBeLessThan(LIMIT_MB);
    // better-sqlite3 (with its own dependencies) is the one package loaded from node_modules: the rest is in dist/.
    const modules = readdirSync(join(installed, 'node_modules'));
    expect(modules).toContain('better-sqlite3');
    for (const bundled of ['commander', 'ink', 'react', 'hono', '@hono', 'pg', 'undici', 'conf', 'chalk', 'yaml', 'gpt-tokenizer']) expect(modules).not.toContain(bundled);
    // Every docs page and picture the README links ships with it.
    const linked = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/\]\((docs\/[\w.-]+\.(?:md|png))/g)].map((m) => m[1]);
    expect(linked).toContain('docs/cli.md');
    for (const f of ['LICENSE', 'README.md', ...linked, 'dist/cli.cjs', 'dist/console/index.html', 'dist/console/app.js']) expect(existsSync(join(installed, f)), f).toBe(true);
    expect(existsSync(join(installed, 'dist', 'cli.cjs.v8cache'))).toBe(false);
  });

  it('runs --version, a piped chat, export and serve from the install', async () => {
    const version = await run(bin, ['--version'], { env });
    expect([version.code, version.stdout.trim()]).toEqual([0, expect.stringMatching(/^\d+\.\d+\.\d+/)]);
    const created = await run(bin, ['entities', 'create', '--name', 'packed'], { env });
    expect([created.code, created.stderr]).toEqual([0, '']);
    const chat = await run(bin, ['chat', 'packed'], { env, input: 'hello from the tarball\n' });
    expect([chat.code, chat.stderr]).toEqual([0, expect.not.stringMatching(/^error/m)]);
    expect(chat.stdout).toContain('hello from the tarball');
    const exported = await run(bin, ['export', 'packed', '--format', 'json'], { env });
    expect([exported.code, exported.stderr]).toEqual([0, '']);
    expect(exported.stdout).toContain('hello from the tarball');
    await serveOnce();
  });

  it('serves MCP on stdio from the install (the SDK bundled into dist/vendor/mcp.mjs, nothing from node_modules)', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'package-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: bin, args: ['mcp'], env: { ...cleanEnv(), ...env } }));
    try {
      const r = (await client.callTool({ name: 'list_entities', arguments: {} })) as { content: Array<{ text: string }> };
      expect(r.content[0]!.text).toMatch(/^1 entity:\npacked · /);
    } finally {
      await client.close();
    }
    expect(readdirSync(join(installed, 'node_modules'))).not.toContain('@modelcontextprotocol');
  });
});

/** Starts `mgpt serve`, asks /healthz and the console's page and script, stops it with SIGTERM. */
async function serveOnce(): Promise<void> {
  const child = spawn(bin, ['serve', '--port', '0'], { env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(String(d).trim()));
      child.once('exit', (code) => reject(new Error(`mgpt serve exited ${code}`)));
    });
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    const page = await fetch(`${url}/`);
    expect([page.status, await page.text()]).toEqual([200, expect.stringContaining('/console/app.js')]);
    expect((await fetch(`${url}/console/app.js`)).status).toBe(200);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}
