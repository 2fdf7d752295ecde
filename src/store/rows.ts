/** The rows of the store, as every implementation reads and writes them (SQLite and PostgreSQL alike). */
import type { SearchTerms } from '../core/text/search-query.js';
import type { LogRecord } from '../core/wire/universe-types.js';

export interface AccountRow {
  id: string;
  name: string;
  balanceUsd: number | null;
  /** The user that owns the account's universes (a UUID). */
  userId: string;
  createdAt: string;
  /** The default requests and tokens per minute of the account's keys; null: none. */
  rpm: number | null;
  tpm: number | null;
}

export interface LedgerRow {
  accountId: string;
  entityId: string | null;
  /** The API key the request came with; null (or absent) for the local backend's own use, which has none. */
  keyId?: string | null;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  createdAt: string;
}

/** The ledger's sums for one group (a UTC day, a model, an entity, an API key). */
export interface LedgerSum {
  group: string | null;
  charges: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What the ledger is summed by, and from when (an ISO time, compared as text). */
export interface LedgerSumQuery {
  accountId: string;
  by: 'day' | 'model' | 'entity' | 'key';
  since?: string;
}

/**
 * A stored prompt, shared by every process on the database (docs/design.md#stored-prompts). A
 * removed prompt keeps its row with `text` null, so a file of that name in a prompts directory is
 * not imported again behind the remover's back.
 */
export interface PromptRow {
  name: string;
  text: string | null;
  /** The output contract (OpenAI `response_format`) as JSON text, or null. */
  responseFormat: string | null;
  additionalInstructions: string | null;
  /** The file it was imported from, or null when it was added with `mgpt prompts add`. */
  source: string | null;
  updatedAt: string;
}

export interface CalibrationRow {
  routeKey: string;
  /** The model's prompt tokens per estimated token. */
  factor: number;
  samples: number;
  /** The context the model revealed (an overflow answer); null until one did. */
  contextTokens: number | null;
  /** How it was learned: named by the server, estimated from a refusal, or a context shared between parallel requests. */
  contextSource: 'server' | 'estimate' | 'shared' | null;
  updatedAt: string;
}

export interface BlockRow {
  id: string;
  position: number;
  kind: 'summary' | 'message';
  role: 'system' | 'user' | 'assistant';
  content: string;
  tokens: number;
  coversFrom: number;
  coversTo: number;
}

export interface EntityRow {
  id: string;
  accountId: string;
  name: string;
  instructions: string;
  instructionsTokens: number;
  model: string;
  state: string;
  budgetTokens: number;
  capTokens: number;
  transcriptMessages: number;
  transcriptTokens: number;
  windowTokens: number;
  windowBlocks: number;
  /** The recall mode: 0 off, 1 the model is offered the `recall` tool, 2 automatic recall before each turn; a row written without it has 0. */
  recall?: RecallModeCode;
  /** The most recalled lines a turn adds to the prompt, in tokens, when set; absent or null: the default (engine/entities/entity-rules.ts). */
  recallTokens?: number | null;
  /** 1: every turn offers the model `remember` (a send may still say otherwise); 0 or absent: only when a send asks. */
  memoryTool?: 0 | 1;
  createdAt: string;
  updatedAt: string;
}

export interface MessageRow {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  tokens: number;
  createdAt: string;
}

/** A search of the account's transcripts (see core/text/search-query.ts for the terms). */
export interface MessageSearch {
  accountId: string;
  terms: SearchTerms;
  /** Only these entities, when given. */
  entityIds?: string[];
  role?: 'user' | 'assistant';
  /** Only messages written at or after this ISO time. */
  since?: string;
  /** Only messages before this seq (recall leaves out what the window still holds). */
  beforeSeq?: number;
  limit: number;
}

/** A ranked search (recall, `mgpt search --any`): any of the words, by their stems. */
export interface RankedSearch extends Omit<MessageSearch, 'terms'> {
  /** Lower-cased words as the query gave them (at most a few dozen; stop words already dropped). */
  words: string[];
}

/** What recall ranks one entity's messages by: its terms, each any of its forms. */
export interface TermMatchQuery {
  entityId: string;
  /**
   * Each term's forms: a word (matched by its stem) or words separated by one space (a phrase,
   * matched as adjacent words); letters and digits only.
   */
  terms: string[][];
  /** Only messages before this seq. */
  beforeSeq?: number;
  /** A term with this many matches or more is too common to rank by: its matches are not returned (null). */
  cap: number;
}

/** A message a term matched: its seq and its length in tokens. */
export interface TermMatch {
  seq: number;
  tokens: number;
}

/** A search of the user's universe conversations. */
export interface UniverseSearch {
  userId: string;
  terms: SearchTerms;
  universeIds?: string[];
  role?: 'user' | 'assistant' | 'tool';
  since?: string;
  limit: number;
}

/** A universe message a search found. */
export interface UniverseMessageHit {
  universeId: string;
  universeName: string | null;
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  createdAt: string;
}

/** A search of the user's generation logs: what each request asked and what it answered. */
export interface LogSearch {
  ownerUserId: string;
  terms: SearchTerms;
  since?: string;
  limit: number;
}

export interface LogHit {
  id: string;
  universeId: string | null;
  model: string;
  createdAt: string;
  /** The request's input and the reply, as indexed. */
  text: string;
}

/** A transcript message a search found, most relevant first (newest first among equals). */
export interface MessageHit extends MessageRow {
  entityId: string;
  entityName: string | null;
  /** How relevant the store ranks it (higher is more; a ranked search's only, on the store's own scale). */
  score?: number;
}

/** An entity's recall mode as stored: off, the recall tool, automatic. */
export type RecallModeCode = 0 | 1 | 2;

export interface IdempotencyRow {
  contentSha256: string;
  /** The completed reply, as JSON, so a replay returns the same ids and content. */
  completion: string;
}

export interface KeyRow {
  id: string;
  accountId: string;
  publicId: string;
  secretSha256: string;
  /** Comma-separated. */
  scopes: string;
  createdAt: string;
  revokedAt: string | null;
  /** The key's own requests and tokens per minute; null: the account's default. */
  rpm: number | null;
  tpm: number | null;
  /** When the key stops working on its own unless renewed (a console session's); null: never. */
  expiresAt: string | null;
}

/**
 * A key's rate state (a generic cell rate algorithm, one row per key): the theoretical arrival
 * times, in epoch milliseconds, at which its requests and its tokens would be back to a whole
 * minute's allowance. `now` is the database's clock, so every process and replica shares one.
 */
export interface RateState {
  now: number;
  requestTat: number;
  tokenTat: number;
}

/** What one admission asks of the state: a request's cost in milliseconds (0: no request limit), and whether tokens are limited. */
export interface RateGate {
  requestMs: number;
  tokens: boolean;
  periodMs: number;
}

export interface LeaseRow {
  subject: LeaseSubject;
  owner: string;
  idempotencyKey: string | null;
  contentSha256: string | null;
  expiresAt: number;
}

/** What a lease guards: one entity or one universe. */
export type LeaseSubject = `entity:${string}` | `universe:${string}`;

export interface LogFilter {
  ownerUserId: string;
  kind?: string;
  gameId?: string;
  userId?: string;
  requestId?: string;
}

/** A stored record: the wire record plus JSON summaries (never the prompt text). */
export interface LogRow extends LogRecord {
  requestSummary: string;
  responseSummary: string;
}

export interface RequestRow {
  userId: string;
  requestId: string;
  universeId: string | null;
  status: 'pending' | 'failed' | 'done';
  userSeq: number | null;
  response: string | null;
}

export interface UniverseMessageRow {
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  content: string | null;
  /** JSON of OpenAI `tool_calls`, on assistant messages that asked for tools. */
  toolCalls: string | null;
  toolCallId: string | null;
  toolName: string | null;
  toolOk: number | null;
  createdAt: string;
}

export interface UniverseRow {
  id: string;
  userId: string;
  displayName: string | null;
  storedPrompt: string;
  promptText: string;
  /** JSON of the OpenAI `response_format` object, or null. */
  responseFormat: string | null;
  additionalInstructions: string | null;
  promptFingerprint: string;
  messages: number;
  createdAt: string;
  updatedAt: string;
}

/** One pinned memory block of an entity: a labelled text in the entity's head. */
export interface MemoryRow {
  label: string;
  text: string;
  tokens: number;
  updatedAt: string;
}

/** One change of a pinned memory block: null `before` is a new block, null `after` a removed one. */
export interface MemoryHistoryRow {
  label: string;
  before: string | null;
  after: string | null;
  source: 'user' | 'model';
  createdAt: string;
}

/**
 * Sets (`text`) or removes (`text` null) one block, with its history row, in one transaction. The
 * limits are checked inside it against what is stored then, so two writers at once cannot pass them.
 */
export interface MemoryWrite {
  entityId: string;
  label: string;
  text: string | null;
  tokens: number;
  source: 'user' | 'model';
  at: string;
  limits: { blocks: number; tokens: number };
}

/**
 * What a memory write did: `changed` with the block before and after (either may be absent);
 * `same` (nothing written: the text was already so, or there was nothing to remove); `over` (nothing
 * written: the blocks and tokens it would have made); `missing` (no such entity).
 */
export type MemoryWriteResult =
  | { kind: 'changed'; before?: MemoryRow; after?: MemoryRow }
  | { kind: 'same'; before?: MemoryRow }
  | { kind: 'over'; blocks: number; tokens: number }
  | { kind: 'missing' };
