import { join } from 'node:path';
import { DEFAULT_LEASE_TTL_MS, DEFAULT_POOL_SIZE, DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/wire/entity-types.js';
import { ConfigError } from '../core/errors.js';
import { DEFAULT_ROTATE_TARGET, DEFAULT_SUMMARY_SHARE } from '../core/window-plan.js';
import { DEFAULT_RECALL_TOKENS } from '../core/text/recall-query.js';
import { DEFAULT_MEMORY_BLOCKS, DEFAULT_MEMORY_TOKENS } from '../core/wire/memory.js';
import { DEFAULT_IMPORT_MAX_CONVERSATIONS } from '../core/wire/chat-import.js';
import { type ProfileSettings, parseValue } from './schema.js';

type Env = Record<string, string | undefined>;

/** The flags that set a setting for one command. */
export interface LayerFlags {
  db?: string;
  backend?: string;
  dev?: boolean;
}

/** One setting and where it can come from, in precedence: flag > environment > profile > default. */
interface SettingSpec {
  key: string;
  flag?: keyof LayerFlags;
  env?: string;
  /** The environment's value is a positive integer. */
  int?: true;
  profile?: (p: ProfileSettings) => unknown;
  fallback?: (env: Env, dataDir: string) => unknown;
}

/**
 * Every scalar setting, once: resolveSettings reads its values from here and `mgpt config list`
 * shows them with their sources, so the two cannot drift. Model routes and prices come from the
 * profile only (MGPT_PROVIDER overrides every route for one command).
 */
export const SETTINGS: readonly SettingSpec[] = [
  { key: 'backend', flag: 'backend', env: 'MGPT_BACKEND', profile: (p) => p.backend, fallback: () => 'local' },
  { key: 'db', flag: 'db', env: 'MGPT_DB', profile: (p) => p.db, fallback: (_, data) => join(data, 'mgpt.db') },
  { key: 'poolSize', env: 'MGPT_POOL_SIZE', int: true, profile: (p) => p.poolSize, fallback: () => DEFAULT_POOL_SIZE },
  { key: 'promptsDir', env: 'MGPT_PROMPTS_DIR', profile: (p) => p.promptsDir, fallback: (_, data) => join(data, 'prompts') },
  { key: 'spoolDir', env: 'MGPT_SPOOL_DIR', profile: (p) => p.spoolDir, fallback: (_, data) => join(data, 'spool') },
  { key: 'baseUrl', env: 'MGPT_BASE_URL', profile: (p) => p.baseUrl },
  { key: 'entitiesUrl', env: 'MGPT_ENTITIES_URL', profile: (p) => p.entitiesUrl },
  { key: 'apiKey', env: 'MGPT_API_KEY', profile: (p) => p.apiKey },
  { key: 'userId', env: 'MGPT_USER_ID', profile: (p) => p.userId },
  { key: 'dev', flag: 'dev', profile: (p) => p.dev, fallback: () => false },
  { key: 'engine.windowBudget', env: 'MGPT_WINDOW_BUDGET', int: true, profile: (p) => p.engine?.windowBudget, fallback: () => DEFAULT_WINDOW_BUDGET },
  { key: 'engine.transcriptCap', env: 'MGPT_TRANSCRIPT_CAP', int: true, profile: (p) => p.engine?.transcriptCap, fallback: () => DEFAULT_TRANSCRIPT_CAP },
  { key: 'engine.maxTranscriptCap', env: 'MGPT_MAX_TRANSCRIPT_CAP', int: true, profile: (p) => p.engine?.maxTranscriptCap, fallback: () => DEFAULT_TRANSCRIPT_CAP },
  { key: 'engine.leaseTtlMs', env: 'MGPT_LEASE_TTL_MS', int: true, profile: (p) => p.engine?.leaseTtlMs, fallback: () => DEFAULT_LEASE_TTL_MS },
  { key: 'engine.rotateTargetPercent', env: 'MGPT_ROTATE_TARGET_PERCENT', int: true, profile: (p) => p.engine?.rotateTargetPercent, fallback: () => DEFAULT_ROTATE_TARGET * 100 },
  { key: 'engine.recallTokens', env: 'MGPT_RECALL_TOKENS', int: true, profile: (p) => p.engine?.recallTokens, fallback: () => DEFAULT_RECALL_TOKENS },
  { key: 'engine.memoryBlocks', env: 'MGPT_MEMORY_BLOCKS', int: true, profile: (p) => p.engine?.memoryBlocks, fallback: () => DEFAULT_MEMORY_BLOCKS },
  { key: 'engine.memoryTokens', env: 'MGPT_MEMORY_TOKENS', int: true, profile: (p) => p.engine?.memoryTokens, fallback: () => DEFAULT_MEMORY_TOKENS },
  { key: 'engine.importMaxConversations', env: 'MGPT_IMPORT_MAX_CONVERSATIONS', int: true, profile: (p) => p.engine?.importMaxConversations, fallback: () => DEFAULT_IMPORT_MAX_CONVERSATIONS },
  { key: 'engine.summaryPercent', env: 'MGPT_SUMMARY_PERCENT', int: true, profile: (p) => p.engine?.summaryPercent, fallback: () => DEFAULT_SUMMARY_SHARE * 100 },
];

/** A setting's value in effect and where it came from: `flag --db`, `env MGPT_DB`, `profile work`, or `default`. */
export interface Layered {
  value: unknown;
  source: string;
}

/**
 * Every setting of the table that has a value, by key. `parse` turns environment integers into
 * numbers (a bad one is an error); without it they are shown as given.
 */
export function layeredSettings(env: Env, flags: LayerFlags, profile: { name: string; settings: ProfileSettings }, dataDir: string, parse = true): Map<string, Layered> {
  const out = new Map<string, Layered>();
  for (const spec of SETTINGS) {
    const hit = firstSet(spec, env, flags, profile, parse);
    if (hit) out.set(spec.key, hit);
    else if (spec.fallback) out.set(spec.key, { value: spec.fallback(env, dataDir), source: 'default' });
  }
  return out;
}

function firstSet(spec: SettingSpec, env: Env, flags: LayerFlags, profile: { name: string; settings: ProfileSettings }, parse: boolean): Layered | undefined {
  const given = (v: unknown) => v !== undefined && v !== '';
  if (spec.flag && given(flags[spec.flag])) return { value: flags[spec.flag], source: `flag --${spec.flag}` };
  if (spec.env && given(env[spec.env])) return { value: spec.int && parse ? positiveInt(spec.env, env[spec.env]!) : env[spec.env], source: `env ${spec.env}` };
  const own = spec.profile?.(profile.settings);
  if (given(own)) return { value: own, source: `profile ${profile.name}` };
  return undefined;
}

function positiveInt(name: string, raw: string): number {
  const parsed = parseValue('engine.windowBudget', raw);
  if ('error' in parsed) throw new ConfigError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return parsed.value as number;
}
