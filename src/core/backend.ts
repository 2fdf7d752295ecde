import { NotSupportedError } from './errors.js';
import type { UsageQuery, UsageReport } from './wire/usage.js';
import type { RateLimits } from './rate-limits.js';
import type { EntityWindowAt, EntityWindowPrompt, RotateInput, RotateResult, RotationList } from './wire/rotation-types.js';
import type { MemoryBlock, MemoryHistory, MemoryList } from './wire/memory.js';
import type { ExchangeInput, ExchangeResult, RecallInput, RecallResult } from './wire/exchange.js';
import type { ChatImportOptions, ChatImportProgressHandler, ChatImportResult } from './wire/chat-import.js';
import type {
  CreateEntityInput,
  CreatedEntity,
  DeletedEntity,
  Entity,
  EntityCompletion,
  EntityList,
  EntityWindow,
  ExportFormat,
  ListMessagesInput,
  SearchInput,
  SearchList,
  MessageList,
  SendInput,
  TurnEvent,
  UpdateEntityInput,
} from './wire/entity-types.js';
import type {
  CreateUniverseInput,
  CreatedUniverse,
  GenerationResponse,
  ImageResponse,
  LogDetail,
  LogList,
  LogQuery,
  StoredPromptInfo,
  UniverseDoc,
  UniverseSummary,
  RespondInput,
  ImageRequest,
} from './wire/universe-types.js';

export interface EntityPage {
  limit?: number;
  offset?: number;
}

export interface RespondOptions {
  signal?: AbortSignal;
  /**
   * The reply's text as it is generated. The local engine streams it; the wire contract has no
   * stream for responses, so the remote backend hands over the whole reply once it has it.
   */
  onDelta?: (text: string) => void;
}

/** What `GET /v1/whoami` (an extension of mgpt serve) says of the key that asks. */
export interface KeyIdentity {
  object: 'api_key';
  id: string;
  account: string;
  /** The account's user id (what the logs endpoint takes as ownerUserId); absent from older servers. */
  user?: string;
  scopes: string[];
}

/** How an import treats a name another entity has (a create always refuses one, 409). */
export interface NamePolicy {
  /** An import numbers the archive's name (`ada (2)`), and refuses a taken `--name` (409). */
  uniqueName?: boolean;
}

export interface ImportOptions extends NamePolicy {
  keepId?: boolean;
  /** The copy's name instead of the archive's (the same rules as create). */
  name?: string;
}

/** An imported entity; `renamedFrom` is the archive's name when it was taken and the copy was numbered (`ada (2)`). */
export type ImportedEntity = Entity & { renamedFrom?: string };

export interface AccountInfo {
  id: string;
  name: string;
  /** null: unmetered. */
  balanceUsd: number | null;
  /** Owner of the account's universes. */
  userId: string;
  createdAt: string;
  /** Its keys' default requests and tokens per minute (null: none). */
  rpm: number | null;
  tpm: number | null;
}

/** A chat.completion that belongs to no entity. */
export type ChatCompletion = Omit<EntityCompletion, 'entity_id'>;

/**
 * A chat completion nothing remembers (`mgpt ask -m MODEL`), in the CLI's terms: the model (a
 * platform id, alias, named model, or `entity:`/`universe:` ref), an optional system prompt and the
 * question. `sampling` holds the fields every surface takes (core/wire/sampling.ts), checked by the engine.
 */
export interface CompleteInput {
  model: string;
  system?: string;
  prompt: string;
  sampling?: Record<string, unknown>;
}

export interface CompleteOptions {
  signal?: AbortSignal;
  onDelta?: (text: string) => void;
}

/**
 * The wire API: what every CLI command that talks to entities and universes runs against, served
 * by `local` (embedded engine) and `remote` (HTTP) alike.
 */
export interface Backend {
  readonly kind: 'local' | 'remote';
  createEntity(input: CreateEntityInput): Promise<CreatedEntity>;
  /** Most recently active first; the remote wire returns at most 200 whatever the page. */
  listEntities(page?: EntityPage): Promise<EntityList>;
  getEntity(id: string): Promise<Entity>;
  /** An ENTITY argument: an id, a unique id prefix of 4+ characters, or an exact name. */
  resolveEntity(ref: string): Promise<Entity>;
  /** Changes name, instructions or budget (never the model); answers the entity as getEntity does. */
  updateEntity(id: string, input: UpdateEntityInput): Promise<Entity>;
  deleteEntity(id: string): Promise<DeletedEntity>;
  /** Streams one turn. Stopping the iteration early (or aborting `signal`) cancels it without a trace. */
  sendMessage(id: string, input: SendInput): AsyncIterable<TurnEvent>;
  listMessages(id: string, input?: ListMessagesInput): Promise<MessageList>;
  getWindow(id: string): Promise<EntityWindow>;
  /** The window the model saw when it answered the message at `at` (a seq or a date): GET /v1/entities/{id}/window?at=. */
  getWindowAt(id: string, at: string): Promise<EntityWindowAt>;
  /** The window and every part of the next turn's request with its tokens, and its messages: GET /v1/entities/{id}/window?prompt=true. */
  getWindowPrompt(id: string): Promise<EntityWindowPrompt>;
  /** The entity's rotations, oldest first: GET /v1/entities/{id}/rotations. */
  listRotations(id: string): Promise<RotationList>;
  /**
   * Folds now, undoes the last rotation, or writes the newest summary again: POST /v1/entities/{id}/rotations
   * (409 while a turn runs). Aborting `signal` cancels it (CancelledError) and writes nothing.
   */
  rotate(id: string, input: RotateInput, opts?: { signal?: AbortSignal }): Promise<RotateResult>;
  /** The entity's pinned memory blocks, their tokens and the limits (GET /v1/entities/{id}/memory). */
  listMemory(id: string): Promise<MemoryList>;
  /** Every change of the pinned memory, oldest first (GET .../memory?history=true). */
  memoryHistory(id: string): Promise<MemoryHistory>;
  /** One block (GET .../memory/{label}); 404 when there is none. */
  getMemory(id: string, label: string): Promise<MemoryBlock>;
  /** Sets one block (PUT .../memory/{label} with {text}); over a limit: 400, nothing changed. */
  setMemory(id: string, label: string, text: string): Promise<MemoryBlock>;
  /** Removes one block (DELETE .../memory/{label}, 204); 404 when there is none. */
  deleteMemory(id: string, label: string): Promise<void>;
  /** What the ranked retriever (auto recall's) finds in the whole transcript within `max_tokens` (GET .../recall, an extension). */
  recall(id: string, input: RecallInput): Promise<RecallResult>;
  /** Stores one exchange (a user message and its reply) with no model call, under the lease (POST .../exchanges, an extension). */
  appendExchange(id: string, input: ExchangeInput): Promise<ExchangeResult>;
  /** Searches the account's transcripts, folded messages included (an extension: GET /v1/search). */
  search(input: SearchInput): Promise<SearchList>;
  /** The export body, streamed in pieces; memory does not grow with the transcript. */
  exportEntity(id: string, format: ExportFormat): AsyncIterable<Uint8Array>;
  /**
   * Imports another tool's chat export, the file at `file`: the local engine reads it in
   * place; the remote backend streams it to `POST /v1/imports` (an extension of mgpt serve).
   * Aborting `signal` stops it after the conversation in progress, which then writes nothing.
   */
  importChats(file: string, opts: ChatImportOptions, onProgress?: ChatImportProgressHandler, signal?: AbortSignal): Promise<ChatImportResult>;
  /**
   * Recreates an entity from mgpt's own archive (tar or JSON, as `mgpt export` writes it); the
   * engine checks it (sha256 values, limits) the same way on both backends. Remotely:
   * `POST /v1/imports?from=mgpt` (an extension of mgpt serve).
   */
  importArchive(bytes: Uint8Array, format: ExportFormat, opts?: ImportOptions): Promise<ImportedEntity>;
  createUniverse(input: CreateUniverseInput): Promise<CreatedUniverse>;
  /** A UNIVERSE argument: an id, a unique id prefix of 4+ characters, or a display name (remotely: the id only). */
  resolveUniverse(ref: string): Promise<string>;
  /**
   * A chat completion nothing remembers (the facade's POST /v1/chat/completions remotely; the
   * facade's parsed entry locally), checked by the engine. Streams text to `onDelta`; answers the
   * chat.completion.
   */
  complete(input: CompleteInput, opts?: CompleteOptions): Promise<ChatCompletion>;
  /** POST /responses; `input` comes from parseRespond (core/wire/universe-input.ts), which both backends' engine applies. */
  respond(input: RespondInput, opts?: RespondOptions): Promise<GenerationResponse>;
  /** POST /images; `input` comes from parseImage. */
  generateImage(input: ImageRequest, opts?: { signal?: AbortSignal }): Promise<ImageResponse>;
  listLogs(query: LogQuery): Promise<LogList>;
  getLog(id: string): Promise<LogDetail>;
  /** The account's billing ledger summed by day, model or entity (an extension: GET /v1/usage). */
  usage(query: UsageQuery): Promise<UsageReport>;
  close(): Promise<void>;
}

/**
 * What only the embedded engine offers, on the host that keeps its database: accounts, API keys,
 * stored prompts, reading universes back, and import. No wire contract carries these, so the
 * remote backend has none of them (the CLI says so with `notOnRemote`).
 */
export interface LocalAdmin {
  listAccounts(): Promise<AccountInfo[]>;
  createAccount(name: string): Promise<AccountInfo>;
  /** Adds `usd` to the account's balance; the first top-up makes an unmetered account metered. */
  topupAccount(id: string, usd: number): Promise<AccountInfo>;
  createKey(account: string, scopes: string[], limits?: Partial<RateLimits>): Promise<KeyInfo>;
  /** Sets a key's own limits given (null: back to its account's default). */
  updateKey(id: string, limits: Partial<RateLimits>): Promise<KeyInfo>;
  /** Sets an account's default limits for its keys given (null: none). */
  updateAccount(id: string, limits: Partial<RateLimits>): Promise<AccountInfo>;
  listKeys(): Promise<KeyInfo[]>;
  revokeKey(id: string): Promise<KeyInfo>;
  listPrompts(): Promise<StoredPromptInfo[]>;
  getPrompt(name: string): Promise<StoredPromptInfo>;
  addPrompt(name: string, prompt: NewPrompt, opts?: { force?: boolean }): Promise<StoredPromptInfo>;
  /** Removes a stored prompt (universes keep their snapshots). */
  removePrompt(name: string): Promise<void>;
  /** Imports a directory's NAME.md/.txt files whose names the store has never held. */
  importPrompts(dir: string): Promise<{ imported: string[]; skipped: string[] }>;
  listUniverses(): Promise<UniverseSummary[]>;
  getUniverse(id: string): Promise<UniverseSummary>;
  /** The universe in `universeDoc` shape (never with the prompt text). */
  getUniverseDoc(id: string): Promise<UniverseDoc>;
  importEntity(bytes: Uint8Array, format: ExportFormat, opts?: ImportOptions): Promise<ImportedEntity>;
  /** What the engine learned about the model behind each id's route (null: nothing yet). */
  learnedLimits(modelIds: string[]): Promise<Record<string, LearnedLimits | null>>;
  /** Forgets what was learned about the model behind `modelId`'s route (all routes when undefined); how many were known. */
  resetCalibration(modelId?: string): Promise<number>;
}

/** What turns taught the engine about a model (docs/design.md#route-limits-and-calibration): its context, how that was learned, and its token factor. */
export interface LearnedLimits {
  contextTokens: number | null;
  /** 'server' (named in an overflow answer), 'estimate' (a refusal without numbers), 'shared' (parallel requests ran out of a shared context). */
  contextSource: string | null;
  factor: number;
  samples: number;
}

/** The error for a local-administration command (`what`: e.g. "keys list", "import") run against a remote server. */
export function notOnRemote(what: string): NotSupportedError {
  return new NotSupportedError(`${what} is not part of the remote API`, { hint: `run it on the server host: mgpt --backend local ${what}` });
}

export interface KeyInfo {
  id: string;
  account: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
  /** When the key stops working on its own unless its holder renews it (a console session's key); null: never. */
  expiresAt: string | null;
  /** The key's own requests and tokens per minute (null: its account's default). */
  rpm: number | null;
  tpm: number | null;
  /** Only when just created: the full key, shown once. */
  key?: string;
}

export interface NewPrompt {
  text: string;
  responseFormat?: Record<string, unknown>;
  additionalInstructions?: string;
}
