import { mkdirSync } from 'node:fs';
import { type Env, configDir } from './config.js';

/** The writable config store (conf), loaded only by commands that change settings. Mode 0600: it may hold keys. */
export async function openConfigStore(env: Env) {
  const { default: Conf } = await import('conf');
  // conf would create the directory 0777 less the umask; it holds keys, so it is private.
  mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
  return new Conf<Record<string, unknown>>({
    projectName: 'mgpt',
    cwd: configDir(env),
    configName: 'config',
    configFileMode: 0o600,
  });
}
