import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/entity-types.js';
import { ConfigError, MgptError } from '../core/errors.js';
import type { ModelPrice, ModelRoute } from '../core/models.js';
import { type ConfigFile, type ProfileSettings, parseValue } from './schema.js';

export type Env = Record<string, string | undefined>;

/** Where config.json lives: $MGPT_CONFIG_DIR, else $XDG_CONFIG_HOME/mgpt, else ~/.config/mgpt. */
export function configDir(env: Env): string {
  return env.MGPT_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'mgpt');
}

export function configPath(env: Env): string {
  return join(configDir(env), 'config.json');
}

/** $XDG_DATA_HOME/mgpt, else ~/.local/share/mgpt. */
export function dataDir(env: Env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'mgpt');
}

/**
 * Reads config.json directly: loading `conf` costs ~100 ms, so it is used only by commands that
 * write settings (see store.ts), while every command reads through this.
 */
export function readConfigFile(env: Env): ConfigFile {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new MgptError(`cannot read config ${path}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    throw new ConfigError(`config ${path} is not valid JSON`, { hint: `fix or remove it; \`mgpt config path\` shows where it is` });
  }
}

export interface GlobalFlags {
  profile?: string;
  db?: string;
  backend?: string;
  dev?: boolean;
}

export interface Settings {
  profile: string;
  backend: 'local' | 'remote';
  db: string;
  /** True when db is the default file in the data directory (not from --db, MGPT_DB or the profile). */
  dbIsDefault: boolean;
  promptsDir: string;
  baseUrl?: string;
  entitiesUrl?: string;
  apiKey?: string;
  userId?: string;
  dev: boolean;
  windowBudget: number;
  transcriptCap: number;
  leaseTtlMs?: number;
  /** PostgreSQL: connections per process (MGPT_POOL_SIZE, the profile's poolSize); unset = the store's default. */
  poolSize?: number;
  prices: Record<string, ModelPrice>;
  /** The provider route of a platform model id (flag > environment > profile > echo). */
  route(modelId: string): ModelRoute;
  /** True when `modelId` falls back to the built-in echo provider because nothing routes it. */
  usesDefaultEcho(modelId: string): boolean;
}

export function activeProfileName(file: ConfigFile, env: Env, flags: GlobalFlags): string {
  return flags.profile || env.MGPT_PROFILE || file.profile || 'default';
}

/** Resolves every setting with the precedence flag > environment > profile > default. */
export function resolveSettings(env: Env, flags: GlobalFlags = {}, file: ConfigFile = readConfigFile(env)): Settings {
  const profileName = activeProfileName(file, env, flags);
  const p: ProfileSettings = file.profiles?.[profileName] ?? {};
  const backend = [flags.backend, env.MGPT_BACKEND, p.backend].find((v) => v) ?? 'local';
  if (backend !== 'local' && backend !== 'remote') {
    throw new ConfigError(`backend must be local or remote, got ${JSON.stringify(backend)}`);
  }
  const chosenDb = flags.db || env.MGPT_DB || p.db;
  const prices: Record<string, ModelPrice> = {};
  for (const [id, pr] of Object.entries(p.prices ?? {})) prices[id] = { input: pr.input ?? 0, output: pr.output ?? 0 };
  const override = env.MGPT_PROVIDER;
  const route = (modelId: string): ModelRoute => {
    if (override) {
      if (override === 'llama') return { provider: 'llama', gguf: env.MGPT_PROVIDER_MODEL };
      return {
        provider: override,
        baseUrl: env.MGPT_PROVIDER_URL || env.OPENAI_BASE_URL,
        model: env.MGPT_PROVIDER_MODEL || modelId,
        apiKey: env.MGPT_PROVIDER_KEY || env.OPENAI_API_KEY,
      };
    }
    // An id routed to a named entry (`use`) takes that entry's settings; one level, no chains.
    const own = p.models?.[modelId];
    const r = own?.use ? p.models?.[own.use] : own;
    if (own?.use && !r) throw new ConfigError(`model ${modelId} is routed to ${JSON.stringify(own.use)}, which is not configured`, { hint: 'see: mgpt models' });
    if (!r || (!r.provider && !r.baseUrl)) return { provider: 'echo', model: modelId };
    return {
      provider: r.provider ?? 'openai',
      model: r.model ?? (own?.use || modelId),
      baseUrl: r.baseUrl,
      apiKey: r.apiKey,
      timeoutMs: r.timeoutMs,
      gguf: r.gguf,
      threads: r.threads,
      contextSize: r.contextSize,
      temperature: r.temperature,
      maxTokens: r.maxTokens,
    };
  };
  return {
    profile: profileName,
    backend,
    db: chosenDb || join(dataDir(env), 'mgpt.db'),
    dbIsDefault: !chosenDb,
    promptsDir: env.MGPT_PROMPTS_DIR || p.promptsDir || join(dataDir(env), 'prompts'),
    baseUrl: env.MGPT_BASE_URL || p.baseUrl,
    entitiesUrl: env.MGPT_ENTITIES_URL || p.entitiesUrl,
    apiKey: env.MGPT_API_KEY || p.apiKey,
    userId: env.MGPT_USER_ID || p.userId,
    dev: flags.dev ?? p.dev ?? false,
    windowBudget: intFrom('MGPT_WINDOW_BUDGET', env.MGPT_WINDOW_BUDGET) ?? p.engine?.windowBudget ?? DEFAULT_WINDOW_BUDGET,
    transcriptCap: intFrom('MGPT_TRANSCRIPT_CAP', env.MGPT_TRANSCRIPT_CAP) ?? p.engine?.transcriptCap ?? DEFAULT_TRANSCRIPT_CAP,
    leaseTtlMs: intFrom('MGPT_LEASE_TTL_MS', env.MGPT_LEASE_TTL_MS),
    poolSize: intFrom('MGPT_POOL_SIZE', env.MGPT_POOL_SIZE) ?? p.poolSize,
    prices,
    route,
    usesDefaultEcho: (modelId) => !override && route(modelId).provider === 'echo' && !p.models?.[p.models?.[modelId]?.use ?? modelId]?.provider,
  };
}

function intFrom(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const parsed = parseValue('engine.windowBudget', raw);
  if ('error' in parsed) throw new ConfigError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return parsed.value as number;
}
