import { describeDb } from '../core/db-url.js';
import { DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/entity-types.js';
import { type Env, type GlobalFlags, activeProfileName, dataDir, readConfigFile } from './config.js';
import { type ConfigFile, type ProfileSettings, isSecretKey, maskSecret } from './schema.js';
import { join } from 'node:path';

/** One setting as it is in effect, and where it comes from. */
export interface EffectiveSetting {
  key: string;
  value: unknown;
  /** `flag --db`, `env MGPT_DB`, `profile work`, or `default`. */
  source: string;
}

type Layer = [source: string, value: unknown];

/**
 * Every setting in effect with its source, in the precedence of resolveSettings (flag >
 * environment > profile > default), defaults included; secrets masked. Model routes and prices
 * come from the profile only (MGPT_PROVIDER overrides every route for one command).
 */
export function effectiveSettings(env: Env, flags: GlobalFlags, file: ConfigFile = readConfigFile(env)): EffectiveSetting[] {
  const profile = activeProfileName(file, env, flags);
  const p: ProfileSettings = file.profiles?.[profile] ?? {};
  const from = `profile ${profile}`;
  const rows: Array<[string, Layer[]]> = [
    ['backend', [['flag --backend', flags.backend], ['env MGPT_BACKEND', env.MGPT_BACKEND], [from, p.backend], ['default', 'local']]],
    ['db', [['flag --db', flags.db], ['env MGPT_DB', env.MGPT_DB], [from, p.db], ['default', join(dataDir(env), 'mgpt.db')]]],
    ['poolSize', [['env MGPT_POOL_SIZE', env.MGPT_POOL_SIZE], [from, p.poolSize], ['default', 10]]],
    ['promptsDir', [['env MGPT_PROMPTS_DIR', env.MGPT_PROMPTS_DIR], [from, p.promptsDir], ['default', join(dataDir(env), 'prompts')]]],
    ['baseUrl', [['env MGPT_BASE_URL', env.MGPT_BASE_URL], [from, p.baseUrl]]],
    ['entitiesUrl', [['env MGPT_ENTITIES_URL', env.MGPT_ENTITIES_URL], [from, p.entitiesUrl]]],
    ['apiKey', [['env MGPT_API_KEY', env.MGPT_API_KEY], [from, p.apiKey]]],
    ['userId', [['env MGPT_USER_ID', env.MGPT_USER_ID], [from, p.userId]]],
    ['dev', [['flag --dev', flags.dev], [from, p.dev], ['default', false]]],
    ['engine.windowBudget', [['env MGPT_WINDOW_BUDGET', env.MGPT_WINDOW_BUDGET], [from, p.engine?.windowBudget], ['default', DEFAULT_WINDOW_BUDGET]]],
    ['engine.transcriptCap', [['env MGPT_TRANSCRIPT_CAP', env.MGPT_TRANSCRIPT_CAP], [from, p.engine?.transcriptCap], ['default', DEFAULT_TRANSCRIPT_CAP]]],
  ];
  const out: EffectiveSetting[] = [];
  for (const [key, layers] of rows) {
    const hit = layers.find(([, v]) => v !== undefined && v !== '');
    if (hit) out.push({ key, value: shown(key, hit[1]), source: hit[0] });
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
