import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, MgptError } from '../core/errors.js';
import { KNOWN_MODELS, type ModelPrice, type ModelRoute } from '../core/models.js';
import { type ConfigFile, type ProfileSettings } from './schema.js';
import { layeredSettings } from './settings-table.js';

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
  /** Where imports keep their temporary files (uploads to serve); leftovers go at serve's start. */
  spoolDir: string;
  baseUrl?: string;
  entitiesUrl?: string;
  apiKey?: string;
  userId?: string;
  dev: boolean;
  windowBudget: number;
  transcriptCap: number;
  maxTranscriptCap: number;
  leaseTtlMs?: number;
  rotateTargetPercent: number;
  summaryPercent: number;
  recallTokens: number;
  memoryBlocks: number;
  memoryTokens: number;
  importMaxConversations: number;
  /** PostgreSQL: connections per process (MGPT_POOL_SIZE, the profile's poolSize); unset = the store's default. */
  poolSize?: number;
  prices: Record<string, ModelPrice>;
  /** The provider route of a platform model id (flag > environment > profile > echo). */
  route(modelId: string): ModelRoute;
  /** The model entry whose settings a model id's route uses: the named model it is routed to, else itself. */
  routeName(modelId: string): string;
  /** True when `modelId` falls back to the built-in echo provider because nothing routes it. */
  usesDefaultEcho(modelId: string): boolean;
  /** The models added with `mgpt models add` (entries of the profile that are not platform ids). */
  namedModels: string[];
}

export function activeProfileName(file: ConfigFile, env: Env, flags: GlobalFlags): string {
  return flags.profile || env.MGPT_PROFILE || file.profile || 'default';
}

/** Resolves every setting with the precedence flag > environment > profile > default (settings-table.ts). */
export function resolveSettings(env: Env, flags: GlobalFlags = {}, file: ConfigFile = readConfigFile(env)): Settings {
  const profileName = activeProfileName(file, env, flags);
  const p: ProfileSettings = file.profiles?.[profileName] ?? {};
  const layers = layeredSettings(env, flags, { name: profileName, settings: p }, dataDir(env));
  const value = <T>(key: string) => layers.get(key)?.value as T;
  const backend = value<string>('backend');
  if (backend !== 'local' && backend !== 'remote') {
    throw new ConfigError(`backend must be local or remote, got ${JSON.stringify(backend)}`);
  }
  const route = routeOf(env, p);
  return {
    profile: profileName,
    backend,
    db: value('db'),
    dbIsDefault: layers.get('db')?.source === 'default',
    promptsDir: value('promptsDir'),
    spoolDir: value('spoolDir'),
    baseUrl: value('baseUrl'),
    entitiesUrl: value('entitiesUrl'),
    apiKey: value('apiKey'),
    userId: value('userId'),
    dev: value('dev'),
    windowBudget: value('engine.windowBudget'),
    transcriptCap: value('engine.transcriptCap'),
    maxTranscriptCap: value('engine.maxTranscriptCap'),
    leaseTtlMs: value('engine.leaseTtlMs'),
    rotateTargetPercent: value('engine.rotateTargetPercent'),
    summaryPercent: value('engine.summaryPercent'),
    recallTokens: value('engine.recallTokens'),
    memoryBlocks: value('engine.memoryBlocks'),
    memoryTokens: value('engine.memoryTokens'),
    importMaxConversations: value('engine.importMaxConversations'),
    poolSize: value('poolSize'),
    prices: pricesOf(p),
    route,
    namedModels: Object.keys(p.models ?? {}).filter((id) => !KNOWN_MODELS.some((m) => m.id === id) && !p.models?.[id]?.use),
    routeName: (modelId) => p.models?.[modelId]?.use ?? modelId,
    usesDefaultEcho: (modelId) => !env.MGPT_PROVIDER && route(modelId).provider === 'echo' && !p.models?.[p.models?.[modelId]?.use ?? modelId]?.provider,
  };
}

function pricesOf(p: ProfileSettings): Record<string, ModelPrice> {
  const prices: Record<string, ModelPrice> = {};
  for (const [id, pr] of Object.entries(p.prices ?? {})) prices[id] = { input: pr.input ?? 0, output: pr.output ?? 0 };
  return prices;
}

/** The provider route of each model id: MGPT_PROVIDER for every id, else the profile's entry, else echo. */
function routeOf(env: Env, p: ProfileSettings): (modelId: string) => ModelRoute {
  const override = env.MGPT_PROVIDER;
  return (modelId) => {
    if (override) {
      const embeddings = env.MGPT_PROVIDER_EMBEDDINGS;
      if (override === 'llama') return { provider: 'llama', gguf: env.MGPT_PROVIDER_MODEL, ...(embeddings && { embeddings: { gguf: embeddings } }) };
      return {
        provider: override,
        baseUrl: env.MGPT_PROVIDER_URL || env.OPENAI_BASE_URL,
        model: env.MGPT_PROVIDER_MODEL || modelId,
        apiKey: env.MGPT_PROVIDER_KEY || env.OPENAI_API_KEY,
        ...(embeddings && { embeddings: { model: embeddings } }),
      };
    }
    // An id routed to a named entry (`use`) takes that entry's settings; one level, no chains.
    const own = p.models?.[modelId];
    const r = own?.use ? p.models?.[own.use] : own;
    if (own?.use && !r) throw new ConfigError(`model ${modelId} is routed to ${JSON.stringify(own.use)}, which is not configured`, { hint: 'see: mgpt models' });
    if (!r || (!r.provider && !r.baseUrl)) return { provider: 'echo', model: modelId };
    const { provider, model, use: _use, ...rest } = r;
    return { ...rest, provider: provider ?? 'openai', model: model ?? (own?.use || modelId) };
  };
}
