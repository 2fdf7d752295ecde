import { describeDb } from '../core/db-url.js';
import { type Env, type GlobalFlags, activeProfileName, dataDir, readConfigFile } from './config.js';
import { type ConfigFile, type ProfileSettings, isSecretKey, maskSecret } from './schema.js';
import { layeredSettings } from './settings-table.js';

/** One setting as it is in effect, and where it comes from. */
export interface EffectiveSetting {
  key: string;
  value: unknown;
  /** `flag --db`, `env MGPT_DB`, `profile work`, or `default`. */
  source: string;
}

/**
 * Every setting in effect with its source, from the one table resolveSettings reads (flag >
 * environment > profile > default), defaults included; secrets masked. Model routes and prices
 * come from the profile only (MGPT_PROVIDER overrides every route for one command).
 */
export function effectiveSettings(env: Env, flags: GlobalFlags, file: ConfigFile = readConfigFile(env)): EffectiveSetting[] {
  const profile = activeProfileName(file, env, flags);
  const p: ProfileSettings = file.profiles?.[profile] ?? {};
  const from = `profile ${profile}`;
  const out: EffectiveSetting[] = [];
  for (const [key, { value, source }] of layeredSettings(env, flags, { name: profile, settings: p }, dataDir(env), false)) {
    out.push({ key, value: shown(key, value), source });
  }
  for (const [key, value] of flatten({ models: p.models, prices: p.prices })) out.push({ key, value: shown(key, value), source: from });
  return out;
}

/** Whether the profile in use exists in the config file (a typo in --profile silently gives defaults). */
export function profileExists(env: Env, flags: GlobalFlags, file: ConfigFile = readConfigFile(env)): { profile: string; exists: boolean } {
  const profile = activeProfileName(file, env, flags);
  return { profile, exists: profile === 'default' || file.profiles?.[profile] !== undefined };
}

function shown(key: string, value: unknown): unknown {
  if (key === 'db' && typeof value === 'string') return describeDb(value);
  return isSecretKey(key) && typeof value === 'string' ? maskSecret(value) : value;
}

function flatten(obj: unknown, prefix = '', out: Array<[string, unknown]> = []): Array<[string, unknown]> {
  if (typeof obj === 'object' && obj !== null && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (obj !== undefined) {
    out.push([prefix, obj]);
  }
  return out;
}
