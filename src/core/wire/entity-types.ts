/** Wire shapes of the entity service (seed 001: docs/design.md#the-two-wire-contracts). */

import { ConflictError, PayloadTooLargeError } from '../errors.js';
import type { RecallMode } from '../text/recall-query.js';

export const ENTITY_MODEL = 'mgpt-1-27b';
export const ENTITY_NAME_MAX = 200;
export const IDEMPOTENCY_KEY_MAX = 200;
export const LIST_ENTITIES_MAX = 200;
export const LIST_MESSAGES_DEFAULT = 100;
export const LIST_MESSAGES_MAX = 500;
export const DEFAULT_WINDOW_BUDGET = 32_000;
export const DEFAULT_TRANSCRIPT_CAP = 1_000_000;
/** How long a turn's hold on its entity or universe outlives a writer that stopped refreshing it. */
export const DEFAULT_LEASE_TTL_MS = 15_000;
/** PostgreSQL: connections per process. */
export const DEFAULT_POOL_SIZE = 10;
/** Window budgets a person may set: below the minimum a rotation has no room for a summary; above the maximum the window could outgrow any transcript. */
export const WINDOW_BUDGET_MIN = 16;
export const WINDOW_BUDGET_MAX = DEFAULT_TRANSCRIPT_CAP;
/**
 * The largest export `import` reads: 64 MiB. A transcript at the default cap (1,000,000 tokens,
 * about 4 bytes each in ordinary text) with its window and JSON framing is well under it, and
 * reading stops there, so a endless input (`/dev/zero`) or a huge one cannot exhaust memory.
 */
export const IMPORT_MAX_BYTES = 64 * 1024 * 1024;

/** The error for an export over IMPORT_MAX_BYTES, wherever it is noticed (the CLI's read, the engine). */
export function importTooLarge(): PayloadTooLargeError {
  return new PayloadTooLargeError(`import: the export is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MiB, the most an export can be`, {
    hint: 'import a file written by mgpt export',
  });
}

/** The error for a name another entity has, where names are unique (the CLI; both backends). */
export function nameTaken(name: string): ConflictError {
  return new ConflictError(`an entity named ${JSON.stringify(name)} already exists`, {
    code: 'already_exists',
    hint: 'choose another --name, or address the existing one by its id (mgpt entities list)',
  });
}

export type Role = 'user' | 'assistant';

export interface Entity {
  id: string;
  object: 'entity';
  name: string;
  instructions: string;
  model: string;
  state: string;
  read_only: boolean;
  transcript: { messages: number; tokens: number; cap_tokens: number };
  /** `tokens` and `blocks` are present on retrieve only, absent on list. */
  window: { budget_tokens: number; tokens?: number; blocks?: number; model_limit_tokens?: number };
  /**
   * An extension, present when on: `tool`, the model may search its own transcript;
   * `auto`, what it no longer sees is recalled before each turn.
   */
  recall?: 'tool' | 'auto';
  /**
   * An extension beside `recall`, present when recall is on or the bound was set: the most recalled
   * lines one turn may add to the prompt, in tokens (what auto recall and the recall tool stay within).
   */
  recall_tokens?: number;
  /** An extension, present when on: every turn offers the model `remember`, which sets a pinned memory block (a send may turn it off for itself). */
  memory_tool?: true;
  created_at: string;
  updated_at: string;
}

export interface CreatedEntity extends Entity {
  entity_id: string;
}

export interface EntityList {
  object: 'list';
  data: Entity[];
}

export interface TranscriptMessage {
  seq: number;
  role: Role;
  content: string;
  tokens: number;
  created_at: string;
}

export interface MessageList {
  object: 'list';
  entity_id: string;
  data: TranscriptMessage[];
  has_more: boolean;
  next_after: number;
}

export interface WindowBlock {
  id: string;
  kind: 'summary' | 'message';
  role: 'system' | Role;
  content: string;
  tokens: number;
  covers: [number, number];
}

export interface EntityWindow {
  entity_id: string;
  object: 'entity.window';
  budget_tokens: number;
  tokens: number;
  blocks: WindowBlock[];
  /**
   * An extension: the window's limit from the model's context, in the same estimated tokens, when
   * the context is known and this is below the budget (rotation then happens at it, not at the budget).
   */
  model_limit_tokens?: number;
}

export interface DeletedEntity {
  id: string;
  object: 'entity';
  deleted: true;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's shape: the prompt tokens the provider served from its prompt cache, when it said. */
  prompt_tokens_details?: { cached_tokens: number };
}

/**
 * Why a reply ended: `stop` when complete (the seed's only value), `length` when cut at the
 * route's maxTokens or the model's context, `content_filter` when the provider withheld the rest,
 * `tool_calls` when the model asked for tools (universe turns and stateless completions).
 */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

/** Buffered reply (`stream: false`): a chat.completion plus `entity_id`. */
/** A tool call in OpenAI's wire shape: `arguments` is the model's JSON text. */
export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface EntityCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: 'assistant'; content: string; tool_calls?: OpenAIToolCall[] };
    finish_reason: FinishReason;
  }>;
  usage: Usage;
  entity_id: string;
  /** An extension, present when automatic recall put earlier messages in the prompt: which, and their tokens. */
  recalled?: RecalledLine[];
}

/**
 * One earlier message automatic recall put in the prompt: its seq, role and tokens, and `content`,
 * its text as the prompt carried it (cut when the recall budget cut it; absent on replies stored
 * before it was carried).
 */
export interface RecalledLine {
  seq: number;
  role: 'user' | 'assistant';
  tokens: number;
  content?: string;
}

export interface CompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    delta: { role?: 'assistant'; content?: string; tool_calls?: Array<OpenAIToolCall & { index: number }> };
    finish_reason: FinishReason | null;
  }>;
  usage?: Usage;
  /** On the usage chunk, as on the completion (an extension): what automatic recall put in the prompt. */
  recalled?: EntityCompletion['recalled'];
  /** On the usage chunk (an extension): the rotation the turn made, so a remote client says so as a local one does. */
  rotation?: Omit<Extract<TurnEvent, { type: 'rotation' }>, 'type'>;
}

/** What a send yields, in order: start, rotation?, delta*, done. */
export type TurnEvent =
  /** `stores: false`: the reply is known to call tools when it starts, so the turn will not be stored. */
  /** `recalledMessages`: how many earlier messages automatic recall put in the prompt, when any; known before the reply. */
  | { type: 'start'; id: string; model: string; created: number; entityId: string; replayed: boolean; stores?: false; recalledMessages?: number }
  | { type: 'rotation'; covers: [number, number]; summaryTokens: number; windowTokens: number; summaryUsage?: Usage }
  | { type: 'delta'; text: string }
  /** `billed`: the tokens the turn billed (its message and its reply, tool calls too); absent when it billed none (a replay). */
  /** `seq`: the stored reply's place in the transcript (absent on a replay), so a caller can name the turn it made. */
  | { type: 'done'; completion: EntityCompletion; replayed: boolean; billed?: number; seq?: number };

export interface CreateEntityInput {
  model: string;
  name?: string;
  instructions?: string;
  /** An extension: "tool" offers the model the recall tool, "auto" recalls before each turn; true is "tool", false "off". */
  recall?: boolean | RecallMode;
  /** An extension: the most recalled lines a turn adds to the prompt, in tokens (1 to half the budget). */
  recall_tokens?: number;
  /** An extension: the window budget in tokens (default: the engine's, engine.windowBudget). */
  budget_tokens?: number;
  /** An extension: the transcript's cap, up to the server's highest (default: engine.transcriptCap). */
  cap_tokens?: number;
  /** An extension: every turn offers the model `remember` (default false). */
  memory_tool?: boolean;
}

/**
 * PATCH /v1/entities/{id} (an extension: docs/design.md#extensions-beyond-the-wire-contracts): any of these, at least one. `model`
 * never changes; the engine refuses it and any other field.
 */
export interface UpdateEntityInput {
  name?: string;
  instructions?: string;
  budget_tokens?: number;
  /** The transcript's cap, up to the server's highest (engine.maxTranscriptCap). */
  cap_tokens?: number;
  recall?: boolean | RecallMode;
  recall_tokens?: number;
  memory_tool?: boolean;
}

export interface SendInput {
  content: string;
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Sampling for this turn only, in the wire names of core/wire/sampling.ts (checked by the engine). */
  sampling?: Record<string, unknown>;
  /** The caller waits for the whole reply: the provider may answer in one piece (it costs a server less). */
  buffered?: boolean;
  /** Offer the model `remember`, which sets a pinned memory block (the wire's `memory_tool`), for this turn; absent: the entity's own setting. */
  memoryTool?: boolean;
  /** When the message was written (ISO 8601; the wire's `at`): it and its reply are stored with this date instead of now. Checked by the engine. */
  at?: string;
}

export interface ListMessagesInput {
  after?: number;
  limit?: number;
}

export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 100;

/** A search of transcripts (an extension: GET /v1/search, GET /v1/entities/{id}/search). */
export interface SearchInput {
  /** Words, "quoted phrases" and prefix* words; every one must match. */
  q: string;
  /** What to search: entity transcripts (the default), universe conversations, or generation logs. */
  source?: SearchSource;
  /** Only these entities (ids). */
  entity_ids?: string[];
  /** Only these universes (ids), with source `universes`. */
  universe_ids?: string[];
  /** Entities: user or assistant; universes: also tool; not for logs. */
  role?: 'user' | 'assistant' | 'tool';
  /** Only messages written at or after this time (ISO 8601). */
  since?: string;
  /** 1 to 100; default 20. */
  limit?: number;
  /** `exact` (the default): every word, phrase and prefix must match; `any`: any word, by its stem, ranked as recall ranks (entities only). */
  mode?: SearchMode;
}

export type SearchSource = 'entities' | 'universes' | 'logs';
export type SearchMode = 'exact' | 'any';

/** A hit: an entity's message (entity_id, seq, role), a universe's message (universe_id, seq, role) or a log record (log_id). */
export interface SearchHit {
  object: 'search.hit';
  entity_id?: string;
  entity_name?: string | null;
  universe_id?: string | null;
  universe_name?: string | null;
  log_id?: string;
  seq?: number;
  role?: 'user' | 'assistant' | 'tool';
  created_at: string;
  /** About 160 characters of the message around its first match. */
  snippet: string;
  /** [start, end) of each matched word in `snippet`. */
  highlights: Array<[number, number]>;
}

export interface SearchList {
  object: 'list';
  data: SearchHit[];
}

/** Export manifest (docs/design.md#export-and-import). */
export interface ExportManifest {
  format: 'mgpt-entity';
  /** 2: the archive's further parts (the window history, the pinned memory) are named in `parts`. */
  version: 1 | 2;
  entity: {
    id: string;
    name: string;
    instructions: string;
    model: string;
    state: string;
    /** The recall mode when on; an archive without it (or from before modes) imports with recall off. */
    recall?: 'tool' | 'auto';
    /** The recall bound when it was set (not the default, which follows the importing engine and budget). */
    recall_tokens?: number;
    /** Present when every turn offers the model the memory tool. */
    memory_tool?: true;
    created_at: string;
    updated_at: string;
  };
  transcript: { messages: number; tokens: number; cap_tokens: number; sha256: string };
  window: { budget_tokens: number; tokens: number; blocks: number; sha256: string };
  exported_at: string;
  exporter: string;
  /** Version 2: each further part (a tar file, a JSON member named after it without `.json`) and its sha256. */
  parts?: Record<string, { sha256: string }>;
}

export type ExportFormat = 'json' | 'tar';
