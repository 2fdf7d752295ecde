import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LLAMA_VERSION, llamaGpu, llamaInstallCommand, llamaPrebuilt } from '../../src/providers/llama/llama-install.js';
import { llamaInstalled } from '../helpers/gguf.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

describe('the node-llama-cpp install command names the machine’s own build', () => {
  it.each([
    ['darwin', 'arm64', '@node-llama-cpp/mac-arm64-metal'],
    ['darwin', 'x64', '@node-llama-cpp/mac-x64'],
    ['linux', 'x64', '@node-llama-cpp/linux-x64'],
    ['linux', 'arm64', '@node-llama-cpp/linux-arm64'],
    ['linux', 'arm', '@node-llama-cpp/linux-armv7l'],
    ['win32', 'x64', '@node-llama-cpp/win-x64'],
    ['win32', 'arm64', '@node-llama-cpp/win-arm64'],
  ])('%s-%s: %s', (platform, arch, prebuilt) => {
    expect(llamaPrebuilt(platform, arch)).toBe(prebuilt);
    expect(llamaInstallCommand(platform, arch)).toBe(
      `npm install --no-save --save-prod --ignore-scripts node-llama-cpp@3.22.1 ${prebuilt}@3.22.1`,
    );
  });

  it('where node-llama-cpp ships no build, has its CLI build one from source', () => {
    const fromSource = 'npm install --no-save --save-prod --ignore-scripts node-llama-cpp@3.22.1 && npx --no node-llama-cpp source download --gpu false';
    expect(llamaPrebuilt('freebsd', 'x64')).toBeNull();
    expect(llamaInstallCommand('freebsd', 'x64')).toBe(fromSource);
    expect(llamaInstallCommand('linux', 'ia32')).toBe(fromSource);
  });

  it('defaults to this machine', () => {
    expect(llamaInstallCommand()).toBe(llamaInstallCommand(process.platform, process.arch));
  });

  it('asks for the Metal build on Apple silicon, the only one node-llama-cpp ships there, and the CPU build elsewhere', () => {
    expect(llamaGpu('darwin', 'arm64')).toBe('metal');
    expect([llamaGpu('darwin', 'x64'), llamaGpu('linux', 'x64'), llamaGpu('linux', 'arm64'), llamaGpu('win32', 'x64')]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('is the version package.json accepts as its optional peer', () => {
    expect(pkg.peerDependencies['node-llama-cpp']).toBe(`^${LLAMA_VERSION}`);
    expect(pkg.peerDependenciesMeta['node-llama-cpp']).toEqual({ optional: true });
  });

  // Reads node-llama-cpp's own list of builds, so it needs the optional library: without it
  // llamaInstalled() prints a banner; .ci/run installs it, so CI runs this.
  it.skipIf(!llamaInstalled())('names only packages node-llama-cpp really has, at the installed version', () => {
    // Its package.json is not exported; the entry point is dist/index.js beside it.
    const entry = createRequire(import.meta.url).resolve('node-llama-cpp');
    const lib = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8'));
    expect(lib.version).toBe(LLAMA_VERSION);
    for (const [platform, arch] of [['darwin', 'arm64'], ['darwin', 'x64'], ['linux', 'x64'], ['linux', 'arm64'], ['linux', 'arm'], ['win32', 'x64'], ['win32', 'arm64']]) {
      expect(Object.keys(lib.optionalDependencies)).toContain(llamaPrebuilt(platform, arch));
    }
  });
});
