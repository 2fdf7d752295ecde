/**
 * The store seam: what the engine needs from a database. Async, so that SQLite (in-process,
 * better-sqlite3) and PostgreSQL (over the network, a pool) serve it alike; the engine never knows
 * which it has. Every write that must be atomic is one method here (a unit of work), so each
 * implementation runs it in one transaction of its own: an async transaction callback would let
 * other turns' statements land inside it on SQLite's single connection.
 */

import type { AccountRow, BlockRow, CalibrationRow, EntityRow, IdempotencyRow, KeyRow, LeaseRow, MemoryHistoryRow, MemoryRow, MemoryWrite, MemoryWriteResult, RateGate, RateState, LeaseSubject, LedgerRow, LedgerSum, LedgerSumQuery, LogFilter, LogHit, LogRow, LogSearch, MessageHit, PromptRow, MessageRow, MessageSearch, RankedSearch, RecallModeCode, TermMatch, TermMatchQuery, RequestRow, UniverseMessageHit, UniverseSearch, UniverseMessageRow, UniverseRow } from './rows.js';
import type { VectorStore } from './vector-types.js';
export type { MessageVector, UnembeddedMessage, VectorStore } from './vector-types.js';

export type {
  AccountRow,
  LedgerRow,
  LedgerSum,
  LedgerSumQuery,
  CalibrationRow,
  PromptRow,
  BlockRow,
  EntityRow,
  MessageRow,
  MessageHit,
  MessageSearch,
  RankedSearch,
  RecallModeCode,
  TermMatch,
  TermMatchQuery,
  UniverseSearch,
  UniverseMessageHit,
  LogSearch,
  LogHit,
  IdempotencyRow,
  KeyRow,
  RateGate,
  RateState,
  LeaseRow,
  LeaseSubject,
  LogFilter,
  LogRow,
  MemoryHistoryRow,
  MemoryRow,
  MemoryWrite,
  MemoryWriteResult,
  RequestRow,
  UniverseMessageRow,
  UniverseRow,
};

import type { ResponseStore } from './response-rows.js';
export type { ConversationRow, ResponseRow, ResponseStore } from './response-rows.js';

import type { EntityHistory, PromptHeadRow, RotationRow, RotationTrigger, SteerWrite, TurnWindowRow, TurnWindowWrite } from './history-rows.js';

export type { EntityHistory, PromptHeadRow, RotationRow, RotationTrigger, SteerWrite, TurnWindowRow, TurnWindowWrite };

export type EntityCounters = Pick<
  EntityRow,
  'transcriptMessages' | 'transcriptTokens' | 'windowTokens' | 'windowBlocks' | 'updatedAt'
>;

export type EntityHeadUpdate = Partial<Pick<EntityRow, 'name' | 'instructions' | 'instructionsTokens' | 'budgetTokens' | 'capTokens' | 'recall' | 'recallTokens' | 'memoryTool'>> &
  Pick<EntityRow, 'updatedAt'>;

/** The lease a unit of work runs under: it writes nothing unless the row is still this owner's. */
export interface LeaseClaim {
  subject: LeaseSubject;
  owner: string;
}

/** Everything one entity turn stores, in one transaction that also frees the lease. */
export interface EntityTurnWrite {
  entityId: string;
  lease: LeaseClaim;
  /** The entity itself, when this turn creates it (a branch): written first, in the same transaction. */
  create?: EntityImport;
  /** The user message and the reply, in seq order. */
  messages: MessageRow[];
  /** The blocks a rotation folded into its summary. */
  deleteBlockIds: readonly string[];
  /** The summary (if any), the user block and the reply block. */
  insertBlocks: BlockRow[];
  counters: EntityCounters;
  charge: LedgerRow;
  idempotency?: { key: string; row: IdempotencyRow; createdAt: string };
  /** The turn's generation record, when it has one (a turn whose model used recall). */
  log?: LogRow;
  /** The rotation this turn made, for the entity's history. */
  rotation?: RotationRow;
  /** What the turn's prompt was made of (`mgpt window --at`). */
  turnWindow?: TurnWindowWrite;
  /** Pinned memory the model set with `remember`, each with its history row. */
  memory?: MemoryWrite[];
}

/** A universe write while its lease is held; `release` (the turn's last write) also frees the lease. */
export interface UniverseWrite {
  universeId: string;
  lease: LeaseClaim;
  /** Drop stored messages after this many (a statePointer), before appending. */
  truncateTo?: number;
  append: UniverseMessageRow[];
  touch: { messages: number; updatedAt: string };
  release: boolean;
  /** The turn's generation record, written with its messages (the turn's last write). */
  log?: LogRow;
  /** The requestId record: `pending` with the user message, `done` (with the response) or `failed` with the last write. */
  request?: RequestRow;
}

import type { EntityImport, ImportConflict, ImportSourceRow } from './import-types.js';
export type { EntityImport, ImportConflict, ImportSourceRow } from './import-types.js';

/** One imported conversation, in one transaction: a new entity, or messages appended to one under its lease. */
export interface ChatImportWrite {
  create?: EntityImport;
  append?: {
    entityId: string;
    lease: LeaseClaim;
    messages: MessageRow[];
    /** Blocks folded into the new summary. */
    deleteBlockIds: readonly string[];
    insertBlocks: BlockRow[];
    counters: EntityCounters;
  };
  /** Where the conversation went; absent for the fold that ends an --into import (no conversation of its own). */
  source?: ImportSourceRow;
  /**
   * The import's fold, as a rotation record: written, or rewritten in place (the same entity and
   * number), since an import's later conversations fold into the same one.
   */
  rotation?: RotationRow;
}

/** An entity as of one moment: its head, its window, its window history and its pinned memory (export). */
export interface EntitySnapshot {
  entity: EntityRow;
  window: BlockRow[];
  history: EntityHistory;
  /** Pinned memory: the blocks by label and every change, oldest first. */
  memory: { blocks: MemoryRow[]; history: MemoryHistoryRow[] };
}

export interface EntityStore {
  insert(row: EntityRow): Promise<void>;
  get(accountId: string, id: string): Promise<EntityRow | undefined>;
  /** Most recently active first, a page at a time. */
  list(accountId: string, limit: number, offset?: number): Promise<EntityRow[]>;
  /** The account's entities named `name`, or whose (lowercase) id starts with `idPrefix`; at most `limit`. */
  matching(accountId: string, name: string, idPrefix: string | null, limit: number): Promise<EntityRow[]>;
  /**
   * The account's entity names that are `name` or start with `prefix`, in one indexed read: how an
   * import numbers a taken name (`New chat (2)`, `(3)`…) without asking once per number.
   */
  namesLike(accountId: string, name: string, prefix: string): Promise<string[]>;
  delete(accountId: string, id: string): Promise<boolean>;
  messages(entityId: string, after: number, limit: number): Promise<MessageRow[]>;
  messagesUpTo(entityId: string, after: number, maxSeq: number, limit: number): Promise<MessageRow[]>;
  window(entityId: string): Promise<BlockRow[]>;
  /** Rewrites the head fields given; the updated row, or undefined when the entity is not there. */
  updateHead(accountId: string, id: string, h: EntityHeadUpdate): Promise<EntityRow | undefined>;
  /** The head and its window as of one moment (one read snapshot), for export. */
  snapshot(accountId: string, id: string): Promise<EntitySnapshot | undefined>;
  /** False (and nothing written) when the lease is no longer ours. */
  commitTurn(w: EntityTurnWrite): Promise<boolean>;
  importEntity(i: EntityImport): Promise<ImportConflict>;
  /** Where these conversations of the tool went, for those imported before: a row per target. */
  importSources(accountId: string, source: string, sourceIds: readonly string[]): Promise<ImportSourceRow[]>;
  /** One imported conversation (see ChatImportWrite); false, and nothing written, when the lease is no longer ours. */
  importChat(w: ChatImportWrite): Promise<boolean>;
  /**
   * The account's transcript messages that contain every clause of the search, ranked by the
   * store's relevance (SQLite FTS5 bm25, PostgreSQL ts_rank_cd), newest first among equals. The
   * index is written in the same transaction as the messages it covers.
   */
  search(q: MessageSearch): Promise<MessageHit[]>;
  /**
   * The account's transcript messages that share a stem with any of `words` (stop words never
   * match), most relevant first by the store's own ranking (FTS5 bm25 over a porter index,
   * PostgreSQL ts_rank_cd over the english configuration): recall and `mgpt search --any`.
   */
  searchAny(q: RankedSearch): Promise<MessageHit[]>;
  /**
   * For each term, the entity's messages that match any of its forms (a word by its stem, a
   * phrase as adjacent words), or null when `cap` or more do: recall ranks them with the entity's
   * own statistics, so other entities and accounts never change what one entity recalls.
   */
  termMatches(q: TermMatchQuery): Promise<Array<TermMatch[] | null>>;
  /** The entity's messages at these seqs (those that exist), in seq order. */
  messagesAt(entityId: string, seqs: number[]): Promise<MessageRow[]>;
}

/** An entity's window history: rotations and what each turn's prompt was made of. */
export interface HistoryStore {
  /** The entity's rotations, oldest first. */
  rotations(entityId: string): Promise<RotationRow[]>;
  /** The rotations numbered `ns`. */
  rotationsNumbered(entityId: string, ns: number[]): Promise<RotationRow[]>;
  /** The rotations whose first-folded span meets seqs [from, to] (where folded blocks' ids are kept). */
  rotationsFolding(entityId: string, from: number, to: number): Promise<RotationRow[]>;
  /** The newest rotation that wrote summary block `blockId` with this text, if one did. */
  summaryWriter(entityId: string, blockId: string, text: string): Promise<number | undefined>;
  /** The highest rotation number (0 for none). */
  lastRotation(entityId: string): Promise<number>;
  /** What the prompt of the turn whose user message is `seq` was made of, with its head's messages. */
  turnWindow(entityId: string, seq: number): Promise<(TurnWindowRow & { head: string }) | undefined>;
  /** The last user message stored at or before `iso`, or undefined. */
  seqAt(entityId: string, iso: string): Promise<number | undefined>;
  /** The whole history, for export. */
  history(entityId: string): Promise<EntityHistory>;
  /** A steering action's unit of work; false (nothing written) when the lease is no longer ours. */
  steer(w: SteerWrite): Promise<boolean>;
}

/** Pinned memory: an entity's labelled blocks and every change to them. */
export interface MemoryStore {
  /** The entity's blocks, by label. */
  list(entityId: string): Promise<MemoryRow[]>;
  /** Every change, oldest first. */
  history(entityId: string): Promise<MemoryHistoryRow[]>;
  /** Sets or removes one block and writes its history row, in one transaction. */
  write(w: MemoryWrite): Promise<MemoryWriteResult>;
}

export interface LeaseStore {
  /** Takes the lease unless another owner holds an unexpired one; returns that holder's row then. */
  acquire(lease: LeaseRow, now: number): Promise<LeaseRow | null>;
  /** Extends the lease; false when it is no longer ours. */
  refresh(subject: LeaseSubject, owner: string, expiresAt: number): Promise<boolean>;
  release(subject: LeaseSubject, owner: string): Promise<void>;
}

export interface IdempotencyStore {
  get(entityId: string, key: string): Promise<IdempotencyRow | undefined>;
  /** A stateless completion's stored reply for the account's Idempotency-Key. */
  completion(accountId: string, key: string): Promise<IdempotencyRow | undefined>;
}

/** A stateless completion's Idempotency-Key record, written with its charge and log. */
export interface CompletionKey {
  key: string;
  row: IdempotencyRow;
  createdAt: string;
}

export interface AccountStore {
  get(id: string): Promise<AccountRow | undefined>;
  byName(name: string): Promise<AccountRow | undefined>;
  list(): Promise<AccountRow[]>;
  insert(row: AccountRow): Promise<void>;
  topup(id: string, usd: number): Promise<void>;
  /** Sets the account's default limits given (null clears one); false when there is no such account. */
  setLimits(id: string, limits: Partial<Pick<AccountRow, 'rpm' | 'tpm'>>): Promise<boolean>;
  charge(row: LedgerRow): Promise<void>;
  /**
   * A stateless completion: its charge, its generation log record and (with a key) its
   * Idempotency-Key record, in one transaction. False, and nothing written, when the account's key
   * is already taken (a concurrent request with the same key stored first).
   */
  chargeWithLog(row: LedgerRow, log: LogRow, key?: CompletionKey): Promise<boolean>;
  ledger(accountId: string): Promise<LedgerRow[]>;
  /** The ledger summed by day, model or entity, largest cost first (days newest first). */
  ledgerSums(q: LedgerSumQuery): Promise<LedgerSum[]>;
}

export interface KeyStore {
  insert(row: KeyRow): Promise<void>;
  byPublicId(publicId: string): Promise<KeyRow | undefined>;
  idsWithPrefix(prefix: string, limit: number): Promise<string[]>;
  list(): Promise<KeyRow[]>;
  revoke(id: string, at: string): Promise<boolean>;
  /** Moves a key's expiry to `expiresAt`; false when there is no such key, it was revoked, or it never expires. */
  renew(id: string, expiresAt: string): Promise<boolean>;
  /** Sets the key's own limits given (null: back to the account's); false when there is no such key. */
  setLimits(id: string, limits: Partial<Pick<KeyRow, 'rpm' | 'tpm'>>): Promise<boolean>;
}

/**
 * Rate limits counted in the database, so every process on one SQLite file and every replica on
 * one PostgreSQL shares them. Each method is one atomic statement on the database's clock.
 */
export interface RateStore {
  /**
   * Admits one request when it fits: its request cost keeps the request time within a period of
   * now, and (when tokens are limited) some of the token allowance is left. The state after the
   * request and `admitted: true`; or, refused and unchanged, the state that refused it.
   */
  admit(keyId: string, gate: RateGate): Promise<RateState & { admitted: boolean }>;
  /**
   * Reserves what a model call may bill before it is made: `tokenMs` more of the token time when
   * some of the allowance is left (the state after and `admitted: true`), else refused and unchanged.
   * Concurrent calls each see the others' reservations, so together they overspend by one at most.
   */
  reserve(keyId: string, tokenMs: number, periodMs: number): Promise<RateState & { admitted: boolean }>;
  /**
   * Counts tokens a turn billed beyond its reservation (`tokenMs` more of the token time, never
   * refused: the turn already ran), or returns what it did not use (negative: never back past now).
   */
  spend(keyId: string, tokenMs: number): Promise<void>;
}

export interface LogStore {
  insert(row: LogRow): Promise<void>;
  idsWithPrefix(ownerUserId: string, prefix: string, limit: number): Promise<string[]>;
  get(ownerUserId: string, id: string): Promise<LogRow | undefined>;
  list(f: LogFilter, limit: number, offset: number): Promise<{ rows: LogRow[]; total: number }>;
  /** The owner's records whose input or reply contains every clause, most relevant first (newest among equals). */
  search(q: LogSearch): Promise<LogHit[]>;
}

export interface UniverseStore {
  insert(row: UniverseRow): Promise<void>;
  get(id: string): Promise<UniverseRow | undefined>;
  matching(userId: string, name: string, idPrefix: string | null, limit: number): Promise<UniverseRow[]>;
  list(userId: string, limit: number): Promise<UniverseRow[]>;
  messages(universeId: string): Promise<UniverseMessageRow[]>;
  /** False (and nothing written) when the lease is no longer ours. */
  write(w: UniverseWrite): Promise<boolean>;
  request(userId: string, requestId: string): Promise<RequestRow | undefined>;
  saveRequest(row: RequestRow, now: string): Promise<void>;
  /** The user's universe messages that contain every clause, most relevant first (newest among equals). */
  search(q: UniverseSearch): Promise<UniverseMessageHit[]>;
}

export interface CalibrationStore {
  get(routeKey: string): Promise<CalibrationRow | undefined>;
  save(row: CalibrationRow): Promise<void>;
  list(): Promise<CalibrationRow[]>;
  /** Forgets what was learned about one route, or about all when `routeKey` is undefined; how many rows went. */
  delete(routeKey?: string): Promise<number>;
}

/** Stored prompts, with removed ones kept as tombstones (text null). */
export interface PromptRowStore {
  /** The row of that name, a tombstone included. */
  get(name: string): Promise<PromptRow | undefined>;
  /** Every row, tombstones included, by name. */
  list(): Promise<PromptRow[]>;
  /**
   * Writes `row` when no prompt of that name is stored: never over a live one, over a tombstone
   * only when `overRemoved` (an explicit add; an import from a directory leaves a removal alone).
   * True when it was written.
   */
  insert(row: PromptRow & { text: string }, opts: { overRemoved: boolean }): Promise<boolean>;
  /** Writes `row` whatever is stored (add --force). */
  put(row: PromptRow & { text: string }): Promise<void>;
  /** Makes a live prompt a tombstone; false when there was none. */
  remove(name: string, at: string): Promise<boolean>;
  /**
   * Rewrites a live prompt that still comes from `row.source` (its file changed): never a
   * tombstone, never a prompt added or replaced by hand since. True when it was written.
   */
  refresh(row: PromptRow & { text: string; source: string }): Promise<boolean>;
}

export type { MigrationStep } from './migration-step.js';

/** The database behind one engine: `sqlite` (a file, the default) or `postgres` (a URL). */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly entities: EntityStore;
  readonly leases: LeaseStore;
  readonly memory: MemoryStore;
  readonly idempotency: IdempotencyStore;
  readonly accounts: AccountStore;
  readonly universes: UniverseStore;
  readonly logs: LogStore;
  readonly keys: KeyStore;
  readonly rates: RateStore;
  readonly calibration: CalibrationStore;
  readonly history: HistoryStore;
  readonly prompts: PromptRowStore;
  readonly responses: ResponseStore;
  readonly vectors: VectorStore;
  /** After deletes: drop old page images (SQLite's WAL); a no-op where there are none. */
  checkpoint(): Promise<void>;
  /** "ok", or what the database's own check found. */
  integrityCheck(): Promise<string>;
  /** Resolves when the database answers a trivial query (`/readyz`). */
  ping(): Promise<void>;
  /**
   * A number that changes whenever another connection (another process) commits, cheap enough to
   * read on every request (SQLite: `PRAGMA data_version`). Caches of rows that other processes may
   * change (the API key cache) are used only while it is unchanged. Absent where it is not cheap
   * (PostgreSQL): such caches are then not kept at all.
   */
  externalVersion?(): number;
  /**
   * For a long-lived server: keeps housekeeping that would stall a commit (SQLite's WAL
   * checkpoints, with their fsyncs) off the event loop until the returned stop is called.
   */
  checkpointInBackground?(): () => Promise<void>;
  close(): Promise<void>;
}
