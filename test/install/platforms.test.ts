import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { llamaInstallCommand } from '../../src/providers/llama/llama-install.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = tempDir('mgpt-platforms-');

/** Where docs/development.md#supported-platforms says mgpt installs; npm checks each package's os/cpu/libc against these. */
const PLATFORMS = [
  ['darwin', 'arm64'],
  ['darwin', 'x64'],
  ['linux', 'arm64'],
  ['linux', 'x64'],
  ['win32', 'x64'],
] as const;

/** A copy of the manifest and lockfile, and a preload that makes npm believe it runs on `platform`-`arch`. */
function project(name: string, platform: string, arch: string): { cwd: string; preload: string } {
  const cwd = join(dir, name);
  mkdirSync(cwd);
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(cwd, f));
  const preload = join(cwd, 'platform.cjs');
  writeFileSync(
    preload,
    `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} });\n` +
      `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });\n`,
  );
  return { cwd, preload };
}

/**
 * `npm ci` or `npm install` as a user on that machine would run it, in dry-run mode: npm builds the
 * whole tree from the lockfile and refuses any package whose os/cpu/libc do not match
 * (EBADPLATFORM), but downloads and writes nothing. --offline with an empty cache of its own shows
 * it needs no registry, so this runs without network.
 */
function dryRun(command: 'ci' | 'install', platform: string, arch: string, extra: string[] = ['--offline']): Promise<{ code: number; out: string }> {
  const { cwd, preload } = project(`${command}-${platform}-${arch}${extra.length > 1 ? '-llama' : ''}`, platform, arch);
  // Without the npm_* variables `npm test` passes down (its prefix, cache, loglevel...).
  const inherited = Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_'));
  const env = {
    ...Object.fromEntries(inherited),
    NODE_OPTIONS: `--require ${preload}`,
    npm_config_cache: join(cwd, 'npm-cache'),
    npm_config_update_notifier: 'false',
  };
  return new Promise((resolve) => {
    execFile('npm', [command, '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', ...extra], { cwd, env }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

// Each check is an npm process of its own: they run side by side.
describe.concurrent('package.json and package-lock.json install on every supported platform', () => {
  for (const command of ['ci', 'install'] as const) {
    for (const [platform, arch] of PLATFORMS) {
      it(`npm ${command} on ${platform}-${arch}`, async () => {
        const r = await dryRun(command, platform, arch);
        expect(r.out).not.toMatch(/EBADPLATFORM|notsup/);
        expect([r.code, r.out]).toEqual([0, expect.stringMatching(/added \d+ packages/)]);
        // npm really took the faked machine for its own: it picked that machine's esbuild binary.
        expect(r.out).toContain(`add @esbuild/${platform}-${arch} `);
        // The llama library is the user's optional install, never part of mgpt's own tree.
        expect(r.out).not.toContain('node-llama-cpp');
      });
    }
  }
});

/** The packages the llama provider's install hint (src/providers/llama/llama-install.ts) has npm add, run in mgpt's folder. */
async function hintAdds(platform: string, arch: string): Promise<string[]> {
  const args = llamaInstallCommand(platform, arch).split(' ');
  expect(args.slice(0, 2)).toEqual(['npm', 'install']);
  // Unlike the checks above this reads the registry's metadata (never a tarball: --dry-run).
  const r = await dryRun('install', platform, arch, args.slice(2));
  expect([r.code, r.out]).toEqual([0, expect.not.stringMatching(/EBADPLATFORM|notsup/)]);
  return [...r.out.matchAll(/^add (\S*node-llama-cpp\S*) /gm)].map((m) => m[1]).sort();
}

describe('the llama install hint, run in mgpt\'s folder', () => {
  // The registry here lacks node-llama-cpp's macOS and Windows builds, so only Linux is tried.
  it('installs node-llama-cpp with only that machine\'s build on linux-arm64', async () => {
    expect(await hintAdds('linux', 'arm64')).toEqual(['@node-llama-cpp/linux-arm64', 'node-llama-cpp']);
  });

  it('installs node-llama-cpp and its linux-x64 CPU build on linux-x64 (npm adds the CUDA and Vulkan builds too)', async () => {
    expect(await hintAdds('linux', 'x64')).toEqual(expect.arrayContaining(['@node-llama-cpp/linux-x64', 'node-llama-cpp']));
  });
});
