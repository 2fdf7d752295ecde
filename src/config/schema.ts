/** The settings mgpt knows, their types and validation. Config keys are dotted paths into a profile. */
import { providerModelProblem, sharedSlotsProblem } from '../core/models.js';

export interface ModelRouteSetting {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Another entry of `models` this id is routed to (`mgpt models add NAME --route ID`). */
  use?: string;
  gguf?: string;
  threads?: number;
  contextSize?: number;
  temperature?: number;
  maxTokens?: number;
  embeddings?: { model?: string; baseUrl?: string; gguf?: string; dimensions?: number };
  sharedSlots?: number;
}

export interface ProfileSettings {
  backend?: 'local' | 'remote';
  baseUrl?: string;
  entitiesUrl?: string;
  apiKey?: string;
  userId?: string;
  dev?: boolean;
  db?: string;
  /** PostgreSQL: connections per process. */
  poolSize?: number;
  promptsDir?: string;
  spoolDir?: string;
  engine?: { windowBudget?: number; transcriptCap?: number; maxTranscriptCap?: number; leaseTtlMs?: number; rotateTargetPercent?: number; summaryPercent?: number; recallTokens?: number; memoryBlocks?: number; memoryTokens?: number; importMaxConversations?: number };
  models?: Record<string, ModelRouteSetting>;
  prices?: Record<string, { input?: number; output?: number }>;
}

export interface ConfigFile {
  /** The active profile when neither --profile nor MGPT_PROFILE names one. */
  profile?: string;
  profiles?: Record<string, ProfileSettings>;
}

type Kind = 'string' | 'providerModel' | 'url' | 'path' | 'boolean' | 'positiveInt' | 'nonNegativeNumber' | 'sharedSlots' | 'secret' | readonly string[];

interface KeySpec {
  pattern: RegExp;
  kind: Kind;
  description: string;
}

const ID = '[A-Za-z0-9][A-Za-z0-9_:-]*'; // no dots: keys are dotted paths

export const KEYS: readonly KeySpec[] = [
  { pattern: /^backend$/, kind: ['local', 'remote'], description: 'local (the embedded engine) or remote (HTTP)' },
  { pattern: /^baseUrl$/, kind: 'url', description: 'remote: the universe API base URL ({base_url})' },
  { pattern: /^entitiesUrl$/, kind: 'url', description: 'remote: the entity API URL, ending in /v1 ({entities_url})' },
  { pattern: /^apiKey$/, kind: 'secret', description: 'remote: the API key (mgpt login stores it)' },
  { pattern: /^userId$/, kind: 'string', description: 'remote: your user id (the logs endpoint scopes by it)' },
  { pattern: /^dev$/, kind: 'boolean', description: 'remote: use the /backend-api/mgpt prefix (local development)' },
  { pattern: /^db$/, kind: 'path', description: 'the local backend\'s database: a SQLite file, or a postgres:// URL' },
  { pattern: /^poolSize$/, kind: 'positiveInt', description: 'PostgreSQL: connections per process at most (default 10)' },
  { pattern: /^promptsDir$/, kind: 'path', description: 'directory of prompt files, imported into the database' },
  { pattern: /^spoolDir$/, kind: 'path', description: "where imports keep their temporary files (serve's uploads); serve removes what a killed process left" },
  { pattern: /^engine\.windowBudget$/, kind: 'positiveInt', description: 'entity window budget in tokens (new entities)' },
  { pattern: /^engine\.transcriptCap$/, kind: 'positiveInt', description: 'entity transcript cap in tokens (new entities)' },
  { pattern: /^engine\.maxTranscriptCap$/, kind: 'positiveInt', description: 'the highest transcript cap an entity may be given (entities update --cap; default 1000000)' },
  { pattern: /^engine\.rotateTargetPercent$/, kind: 'positiveInt', description: 'what a rotation brings the whole window to, in percent of the budget and the model limit (20-90, default 25)' },
  { pattern: /^engine\.recallTokens$/, kind: 'positiveInt', description: 'the most automatic recall adds to a turn\'s prompt, in tokens (at most a fifth of a known model context; default 1000)' },
  { pattern: /^engine\.memoryBlocks$/, kind: 'positiveInt', description: 'the most pinned memory blocks an entity may have (default 16)' },
  { pattern: /^engine\.memoryTokens$/, kind: 'positiveInt', description: "the most tokens an entity's pinned memory blocks may hold together (default 2000)" },
  { pattern: /^engine\.summaryPercent$/, kind: 'positiveInt', description: 'the most one rotation summary may take, in percent of the same (5 to half the target, default 10)' },
  { pattern: /^engine\.importMaxConversations$/, kind: 'positiveInt', description: 'the most conversations one chat import may hold (413 above; default 100000)' },
  { pattern: /^engine\.leaseTtlMs$/, kind: 'positiveInt', description: "how long a turn's hold on its entity outlives a writer that died (ms, default 15000)" },
  { pattern: new RegExp(`^models\\.${ID}\\.provider$`), kind: ['echo', 'openai', 'llama'], description: 'provider of a model id' },
  { pattern: new RegExp(`^models\\.${ID}\\.model$`), kind: 'providerModel', description: "the provider's model name" },
  { pattern: new RegExp(`^models\\.${ID}\\.baseUrl$`), kind: 'url', description: 'OpenAI-compatible base URL ending in /v1' },
  { pattern: new RegExp(`^models\\.${ID}\\.apiKey$`), kind: 'secret', description: "the provider's API key" },
  { pattern: new RegExp(`^models\\.${ID}\\.timeoutMs$`), kind: 'positiveInt', description: 'provider timeout (ms)' },
  { pattern: new RegExp(`^models\\.${ID}\\.use$`), kind: 'string', description: 'route this id to another models entry (by name)' },
  { pattern: new RegExp(`^models\\.${ID}\\.gguf$`), kind: 'path', description: 'llama: the GGUF model file' },
  { pattern: new RegExp(`^models\\.${ID}\\.threads$`), kind: 'positiveInt', description: 'llama: CPU threads (default: cores - 1)' },
  { pattern: new RegExp(`^models\\.${ID}\\.contextSize$`), kind: 'positiveInt', description: "the model's context in tokens (llama default 2048; openai/echo: unset = learned from the provider)" },
  { pattern: new RegExp(`^models\\.${ID}\\.temperature$`), kind: 'nonNegativeNumber', description: 'sampling temperature (llama default 0.8; openai: unset = not sent; 0 is deterministic)' },
  { pattern: new RegExp(`^models\\.${ID}\\.maxTokens$`), kind: 'positiveInt', description: 'longest reply in tokens (llama default 256; openai: unset = not sent)' },
  { pattern: new RegExp(`^models\\.${ID}\\.embeddings\\.model$`), kind: 'providerModel', description: 'semantic recall (openai): the embedding model, sent to /v1/embeddings' },
  { pattern: new RegExp(`^models\\.${ID}\\.embeddings\\.baseUrl$`), kind: 'url', description: "semantic recall (openai): the embeddings server, ending in /v1 (default: the route's baseUrl)" },
  { pattern: new RegExp(`^models\\.${ID}\\.embeddings\\.gguf$`), kind: 'path', description: 'semantic recall (llama): the embedding GGUF file' },
  { pattern: new RegExp(`^models\\.${ID}\\.embeddings\\.dimensions$`), kind: 'positiveInt', description: "semantic recall (openai): the vectors' length to ask for (models that can shorten theirs)" },
  { pattern: new RegExp(`^models\\.${ID}\\.sharedSlots$`), kind: 'sharedSlots', description: "openai: how many requests the server runs at once on one shared context (llama-server's slots with a unified KV cache); each turn is planned for the context / this (unset: the server's /props says, once the context is seen shared; 1: the whole context)" },
  { pattern: new RegExp(`^prices\\.${ID}\\.(input|output)$`), kind: 'nonNegativeNumber', description: 'USD per million tokens' },
];

export function keySpec(key: string): KeySpec | undefined {
  return KEYS.find((k) => k.pattern.test(key));
}

export function isSecretKey(key: string): boolean {
  return keySpec(key)?.kind === 'secret';
}

/** Parses a value given on the command line for `key`; returns an error message when it does not fit. */
export function parseValue(key: string, raw: string): { value: unknown } | { error: string } {
  const spec = keySpec(key);
  if (!spec) return { error: `unknown config key ${JSON.stringify(key)}` };
  const kind = spec.kind;
  if (Array.isArray(kind)) {
    return kind.includes(raw) ? { value: raw } : { error: `${key} must be one of ${kind.join(', ')}` };
  }
  switch (kind) {
    case 'boolean':
      if (raw === 'true' || raw === '1') return { value: true };
      if (raw === 'false' || raw === '0') return { value: false };
      return { error: `${key} must be true or false` };
    case 'positiveInt': {
      const n = Number(raw);
      return /^\d+$/.test(raw) && Number.isSafeInteger(n) && n > 0 ? { value: n } : { error: `${key} must be a positive integer` };
    }
    case 'nonNegativeNumber': {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n) && n >= 0 ? { value: n } : { error: `${key} must be a number >= 0` };
    }
    case 'sharedSlots': {
      const n = /^\d+$/.test(raw) ? Number(raw) : raw;
      const problem = sharedSlotsProblem(n);
      return problem ? { error: `${key} ${problem}` } : { value: n };
    }
    case 'providerModel': {
      const problem = providerModelProblem(raw);
      return problem ? { error: `${key} ${problem}` } : { value: raw };
    }
    case 'url':
      try {
        const u = new URL(raw);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
        return { value: raw.replace(/\/+$/, '') };
      } catch {
        return { error: `${key} must be an http(s) URL` };
      }
    default:
      return raw === '' ? { error: `${key} must not be empty` } : { value: raw };
  }
}

/** `mgpt_live_abcd…`: enough to recognise a key, never enough to use it. */
export function maskSecret(value: string): string {
  return value.length <= 14 ? '…' : `${value.slice(0, 14)}…`;
}
