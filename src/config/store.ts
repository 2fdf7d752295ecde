import { type Env, configDir } from './config.js';

/** The writable config store (conf), loaded only by commands that change settings. Mode 0600: it may hold keys. */
export async function openConfigStore(env: Env) {
  const { default: Conf } = await import('conf');
  return new Conf<Record<string, unknown>>({
    projectName: 'mgpt',
    cwd: configDir(env),
    configName: 'config',
    configFileMode: 0o600,
  });
}
