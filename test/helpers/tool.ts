import { spawnSync } from 'node:child_process';

/**
 * Whether a program a test drives (tmux, zsh, fish) is on PATH. The Quick start installs only Node, so
 * without it those tests cannot run: they say so loudly and skip. .ci/run installs them.
 */
export function hasTool(name: string, why: string): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
  if (!found) {
    const banner = '!'.repeat(78);
    console.warn(`\n${banner}\n!! ${why} DID NOT RUN: ${name} is not installed (apt-get install ${name}; .ci/run does).\n${banner}\n`);
  }
  return found;
}
