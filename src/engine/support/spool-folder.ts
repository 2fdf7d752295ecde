import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Imports keep what they read in temporary folders (an upload to `POST /v1/imports`, up to 8 GiB;
 * the conversations `--into` orders) inside one folder of mgpt's own, each named after the host
 * and process that made it: `mgpt-<host>-<pid>-<random>`. A process removes its folders when it is
 * done; those of one that was killed are found by their name at the next `mgpt serve` start
 * (sweepSpools), while those of processes still running (another replica, a local import) stay.
 */
export async function makeSpool(root: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  return mkdtemp(join(root, `${prefix(hostname())}${process.pid}-`));
}

/** Removes the spool folders in `root` left by processes of this host that no longer run; returns how many. */
export async function sweepSpools(root: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const ours = prefix(hostname());
  let removed = 0;
  for (const name of names) {
    const pid = name.startsWith(ours) ? /^(\d+)-[^-]+$/.exec(name.slice(ours.length))?.[1] : undefined;
    if (pid === undefined || running(Number(pid))) continue;
    await rm(join(root, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

function prefix(host: string): string {
  // A host name is letters, digits, dots and dashes; anything else is kept out of the file name.
  return `mgpt-${host.replace(/[^A-Za-z0-9.-]/g, '_')}-`;
}

/** True while a process with this id exists (one of another user answers EPERM: it runs). */
function running(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
