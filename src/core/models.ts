/** Platform model ids and aliases (docs/design.md#models-and-routes). */

export type ModelKind = 'entity' | 'text' | 'image';

export interface KnownModel {
  id: string;
  kind: ModelKind;
  description: string;
}

export const KNOWN_MODELS: readonly KnownModel[] = [
  { id: 'mgpt-1-27b', kind: 'entity', description: 'entity model (routed backbone)' },
  { id: 'game-1-lite-frozen', kind: 'text', description: 'text alias' },
  { id: 'agent-1-lite-frozen', kind: 'text', description: 'text alias' },
  { id: 'general-frozen-overridable', kind: 'text', description: 'text alias; accepts modelOverride' },
  { id: 'image-1', kind: 'image', description: 'public image alias (default for images)' },
];

/** The longest provider model name a route or a request may give. */
export const PROVIDER_MODEL_MAX_CHARS = 200;
const PROVIDER_MODEL = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/;

/**
 * Why a provider's model name (a route's `model`, the model a resummary is written by) is
 * refused, or undefined when it is fine. Real names are short words with a few separators
 * (`gpt-4o`, `gemma3:27b`, `meta-llama/Llama-3.1-8B-Instruct`); the name is stored with each
 * rotation and sent to a provider, so a 10 KB string or a path like `../../v1/keys` is refused.
 */
export function providerModelProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > PROVIDER_MODEL_MAX_CHARS) return `must be 1-${PROVIDER_MODEL_MAX_CHARS} characters (it has ${name.length})`;
  if (!PROVIDER_MODEL.test(name)) return 'may hold only letters, digits and . _ : @ + / -, and starts with a letter or a digit';
  if (name.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'may not have an empty, "." or ".." part between slashes';
  return undefined;
}

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'mgpt-1-27b': { input: 0.5, output: 1.5 },
};

export function costUsd(price: ModelPrice | undefined, inputTokens: number, outputTokens: number): number {
  if (!price) return 0;
  return roundUsd((inputTokens * price.input + outputTokens * price.output) / 1_000_000);
}

/** Money is kept to a millionth of a cent so sums do not drift. */
export function roundUsd(x: number): number {
  return Math.round(x * 1e8) / 1e8;
}

/** What a route allows; unset means unknown (context) or not sent (maxTokens, temperature). */
export interface RouteLimits {
  /** The model's context in its own tokens. */
  contextSize?: number;
  /** The longest reply, in the model's tokens. */
  maxTokens?: number;
  temperature?: number;
  /**
   * How many requests the server runs at once on one context they share (llama-server's slots over
   * a unified KV cache): each turn is planned for the context divided by it. Unset: what the server
   * reports, once the route is known to share its context; 1: every turn is planned for all of it.
   */
  sharedSlots?: number;
}

/** Where a platform model id is routed. */
/** What the llama provider uses for what a route leaves unset. */
export const LLAMA_DEFAULTS = { contextSize: 2048, temperature: 0.8, maxTokens: 256 } as const;

export interface ModelRoute {
  /** `echo`, `openai`, ... */
  provider: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** llama: the GGUF file, and how to run it. */
  gguf?: string;
  threads?: number;
  contextSize?: number;
  temperature?: number;
  maxTokens?: number;
  /** openai: how many requests the server runs at once on one shared context (each turn is planned for a share of it). */
  sharedSlots?: number;
  /** Semantic recall: the model that embeds this route's entities' messages (docs/entities-and-memory.md#embeddings-semantic-recall). */
  embeddings?: EmbeddingRoute;
}

/** Where a route's embeddings come from; unset fields take the route's own (its server, its key). */
export interface EmbeddingRoute {
  /** openai: the embedding model's name, sent as `model` to `/v1/embeddings`. */
  model?: string;
  /** openai: another server for embeddings (`llama-server --embeddings`), ending in /v1. */
  baseUrl?: string;
  /** llama: the GGUF file of the embedding model (default: the route's own). */
  gguf?: string;
  /** openai: asks for vectors this long (OpenAI's `dimensions`, for models that can shorten theirs). */
  dimensions?: number;
}

/** Why a route's `sharedSlots` is refused, or undefined when it is fine (unset, or a whole number of slots). */
export function sharedSlotsProblem(slots: unknown): string | undefined {
  if (slots === undefined) return undefined;
  if (typeof slots === 'number' && Number.isSafeInteger(slots) && slots >= 1 && slots <= MAX_SHARED_SLOTS) return undefined;
  return `must be a whole number of slots from 1 to ${MAX_SHARED_SLOTS}, got ${JSON.stringify(slots)}`;
}

/** More slots than any server runs on one context: a typo, not a layout. */
export const MAX_SHARED_SLOTS = 1024;

/** What a request asked for, at most the route's configured value; the route's when it asked nothing. */
export function ceiling(asked: number | undefined, route: number | undefined): number | undefined {
  if (asked === undefined) return route;
  return route === undefined ? asked : Math.min(asked, route);
}
