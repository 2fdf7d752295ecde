import { spawnSync } from 'node:child_process';

/**
 * Whether a program a test drives (tmux, zsh, fish) is on PATH. The Quick start installs only Node, so
 * without it those tests cannot run: they say so loudly and skip. .ci/run installs them.
 */
export function hasTool(name: string, why: string): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
  if (!found) didNotRun(why, `${name} is not installed (apt-get install ${name}; .ci/run does)`);
  return found;
}

/** Says loudly that a part of the suite did not run, and why. */
export function didNotRun(what: string, why: string): void {
  const banner = '!'.repeat(78);
  console.warn(`\n${banner}\n!! ${what} DID NOT RUN: ${why}.\n${banner}\n`);
}
