import type {
  AccountStore,
  CalibrationStore,
  PromptRowStore,
  EntityStore,
  HistoryStore,
  IdempotencyStore,
  KeyStore,
  LeaseStore,
  LogStore,
  MemoryStore,
  VectorStore,
  RateStore,
  ResponseStore,
  Store,
  UniverseStore,
  UniverseWrite,
} from '../types.js';
import { largeWork } from '../../core/lane.js';
import { busyAsConflict } from './busy.js';
import { type Checkpointer, startCheckpointer } from './checkpointer.js';
import { type Db, type OpenOptions, nativeBinding } from './db.js';
import { commitTurn, importChat, importEntity, owns, steer } from './entity-writes.js';
import { LARGE_WRITE_ROWS, LargeWriter, type WriterRows, chatRows } from './large-writer.js';
import { SqliteRepos } from './repos.js';

/**
 * The Store over one SQLite file (better-sqlite3). Every method runs synchronously and resolves at
 * once; each unit of work is one synchronous BEGIN IMMEDIATE transaction, so no other turn's
 * statements can land inside it, and cross-process writers queue on the file lock. An entity of
 * thousands of rows is written by a worker thread instead (large-writer.ts); while it writes,
 * this connection's writes wait for it without holding the thread.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
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
  private checkpointer: Checkpointer | undefined;
  private writer: LargeWriter | undefined;

  constructor(readonly repos: SqliteRepos) {
    const busy = () => this.writer?.busy;
    const write = <T extends object>(section: T, writes: ReadonlyArray<keyof T>) => busyAsConflict(waitingFor(busy, section, writes));
    this.entities = write(entityStore(repos, (rows) => this.largeWriter(rows)), ['insert', 'delete', 'updateHead', 'commitTurn', 'importEntity', 'importChat']);
    this.leases = write(leaseStore(repos), ['acquire', 'refresh', 'release']);
    this.memory = write({
      list: async (entityId) => repos.memory.list(entityId),
      history: async (entityId) => repos.memory.history(entityId),
      write: async (w) => repos.transaction(() => repos.memory.write(w)),
    }, ['write']);
    this.idempotency = busyAsConflict<IdempotencyStore>({
      get: async (entityId, key) => repos.idempotency.get(entityId, key),
      completion: async (accountId, key) => repos.idempotency.completion(accountId, key),
    });
    this.accounts = write(accountStore(repos), ['insert', 'topup', 'setLimits', 'charge', 'chargeWithLog']);
    this.universes = write(universeStore(repos), ['insert', 'write', 'saveRequest']);
    this.logs = write({
      insert: async (row) => repos.logs.insert(row),
      idsWithPrefix: async (owner, prefix, limit) => repos.logs.idsWithPrefix(owner, prefix, limit),
      get: async (owner, id) => repos.logs.get(owner, id),
      list: async (f, limit, offset) => repos.logs.list(f, limit, offset),
      search: (q) => inTurn(() => repos.logs.search(q)),
    }, ['insert']);
    this.keys = write({
      insert: async (row) => repos.keys.insert(row),
      byPublicId: async (publicId) => repos.keys.byPublicId(publicId),
      idsWithPrefix: async (prefix, limit) => repos.keys.idsWithPrefix(prefix, limit),
      list: async () => repos.keys.list(),
      revoke: async (id, at) => repos.keys.revoke(id, at),
      renew: async (id, expiresAt) => repos.keys.renew(id, expiresAt),
      setLimits: async (id, limits) => repos.keys.setLimits(id, limits),
    }, ['insert', 'revoke', 'setLimits']);
    this.rates = write({
      admit: async (keyId, gate) => repos.rates.admit(keyId, gate),
      reserve: async (keyId, tokenMs, periodMs) => repos.rates.reserve(keyId, tokenMs, periodMs),
      spend: async (keyId, tokenMs) => repos.rates.spend(keyId, tokenMs),
    }, ['admit', 'reserve', 'spend']);
    this.calibration = write({
      get: async (routeKey) => repos.calibration.get(routeKey),
      save: async (row) => repos.calibration.save(row),
      list: async () => repos.calibration.list(),
      delete: async (routeKey) => repos.calibration.delete(routeKey),
    }, ['save', 'delete']);
    this.history = write(historyStore(repos), ['steer']);
    this.prompts = write({
      get: async (name) => repos.prompts.get(name),
      list: async () => repos.prompts.list(),
      insert: async (row, opts) => repos.prompts.insert(row, opts.overRemoved),
      put: async (row) => repos.prompts.put(row),
      remove: async (name, at) => repos.prompts.remove(name, at),
      refresh: async (row) => repos.prompts.refresh(row),
    }, ['insert', 'put', 'remove', 'refresh']);
    this.responses = write(responseStore(repos), ['insert', 'delete', 'putConversation']);
    this.vectors = write({
      unembedded: async (entityId, model, limit) => repos.vectors.unembedded(entityId, model, limit),
      put: async (entityId, model, vectors) => repos.transaction(() => repos.vectors.put(entityId, model, vectors)),
      vectors: async (entityId, model, beforeSeq) => repos.vectors.vectors(entityId, model, beforeSeq),
      count: async (entityId, model) => repos.vectors.count(entityId, model),
    }, ['put']);
  }

  /** Opens (creating and migrating if needed) the SQLite file at `path`. */
  static open(path: string, opts: OpenOptions = {}): SqliteStore {
    return new SqliteStore(SqliteRepos.open(path, opts));
  }

  /** The raw connection: SQLite-only callers (tests, the bench) read the file through it. */
  get db(): Db {
    return this.repos.db;
  }

  async checkpoint(): Promise<void> {
    for (let b = this.writer?.busy; b; b = this.writer?.busy) await b;
    this.repos.checkpoint();
  }

  async integrityCheck(): Promise<string> {
    return this.repos.integrityCheck();
  }

  /** Changes when another connection commits; this connection's own commits leave it as it is. */
  externalVersion(): number {
    return this.repos.dataVersion();
  }

  async ping(): Promise<void> {
    this.repos.db.prepare('SELECT 1').get();
  }

  /** Checkpoints on a worker thread with its own connection (see checkpointer.ts); none for an in-memory database. */
  checkpointInBackground(): () => Promise<void> {
    if (!this.checkpointer && !this.repos.db.memory) this.checkpointer = startCheckpointer(this.repos.db, nativeBinding());
    const running = this.checkpointer;
    return async () => {
      await running?.stop();
      if (this.checkpointer === running) this.checkpointer = undefined;
    };
  }

  /** How many checkpoints the background worker has run (tests). */
  get backgroundCheckpoints(): number {
    return this.checkpointer?.runs ?? 0;
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    await this.writer?.stop();
    this.writer = undefined;
    this.repos.close();
  }

  /** The worker for an entity this large, started on first use; none for a small one or an in-memory database. */
  private largeWriter(rows: WriterRows): LargeWriter | undefined {
    if (rows.messages.length + rows.blocks.length < LARGE_WRITE_ROWS || this.repos.db.memory) return undefined;
    if (!this.writer || this.writer.stopped) this.writer = LargeWriter.start(this.repos.db.name);
    return this.writer;
  }
}

/**
 * `section` with the methods named in `writes` first waiting, while `busy()` says a large write
 * holds the file's write lock, for it to end: here SQLite would wait by blocking the thread.
 */
function waitingFor<T extends object>(busy: () => Promise<void> | undefined, section: T, writes: ReadonlyArray<keyof T>): T {
  const out: T = { ...section };
  for (const name of writes) {
    const write = section[name] as (...args: unknown[]) => Promise<unknown>;
    const waited = async (args: unknown[]) => {
      for (let b = busy(); b; b = busy()) await b;
      return write(...args);
    };
    // No wait, no extra promise: the common case costs one call.
    (out as Record<keyof T, unknown>)[name] = (...args: unknown[]) => (busy() ? waited(args) : write(...args));
  }
  return out;
}

/** A large entity's write goes to the worker `large` gives, if it gives one; the rest are written here. */
function entityStore(r: SqliteRepos, large: (rows: WriterRows) => LargeWriter | undefined): EntityStore {
  const e = r.entities;
  return {
    insert: async (row) => e.insert(row),
    get: async (accountId, id) => e.get(accountId, id),
    list: async (accountId, limit, offset) => e.list(accountId, limit, offset),
    matching: async (accountId, name, idPrefix, limit) => e.matching(accountId, name, idPrefix, limit),
    namesLike: async (accountId, name, prefix) => e.namesLike(accountId, name, prefix),
    delete: async (accountId, id) => e.delete(accountId, id),
    messages: async (entityId, after, limit) => e.messages(entityId, after, limit),
    messagesUpTo: async (entityId, after, maxSeq, limit) => e.messagesUpTo(entityId, after, maxSeq, limit),
    window: async (entityId) => e.window(entityId),
    updateHead: async (accountId, id, h) =>
      r.transaction(() => (e.updateHead(accountId, id, h) ? e.get(accountId, id) : undefined)),
    snapshot: async (accountId, id) =>
      r.snapshot(() => {
        const entity = e.get(accountId, id);
        const memory = { blocks: r.memory.list(id), history: r.memory.history(id) };
        return entity && { entity, window: e.window(id), history: r.history.history(id), memory };
      }),
    commitTurn: async (w) => {
      const writer = w.create && large(w.create);
      if (writer && w.create) return writer.commitTurn({ ...w, create: w.create });
      return r.transaction(() => commitTurn(r, w));
    },
    importEntity: async (i) => {
      const writer = large(i);
      return writer ? writer.importEntity(i) : r.transaction(() => importEntity(r, i));
    },
    importSources: async (accountId, source, ids) => r.imports.sources(accountId, source, ids),
    importChat: async (w) => {
      // A conversation of thousands of messages is written by the worker, so the event loop keeps answering.
      const writer = large(chatRows(w));
      return writer ? writer.importChat(w) : r.transaction(() => importChat(r, w));
    },
    search: (q) => inTurn(() => r.entities.search(q)),
    searchAny: (q) => inTurn(() => r.entities.searchAny(q)),
    termMatches: (q) => inTurn(() => r.entities.termMatches(q)),
    messagesAt: async (entityId, seqs) => r.entities.messagesAt(entityId, seqs),
  };
}

function historyStore(r: SqliteRepos): HistoryStore {
  const h = r.history;
  return {
    rotations: async (entityId) => h.rotations(entityId),
    rotationsNumbered: async (entityId, ns) => h.rotationsNumbered(entityId, ns),
    rotationsFolding: async (entityId, from, to) => h.rotationsFolding(entityId, from, to),
    summaryWriter: async (entityId, blockId, text) => h.summaryWriter(entityId, blockId, text),
    lastRotation: async (entityId) => h.lastRotation(entityId),
    turnWindow: async (entityId, seq) => h.turnWindow(entityId, seq),
    seqAt: async (entityId, iso) => h.seqAt(entityId, iso),
    history: async (entityId) => r.snapshot(() => h.history(entityId)),
    steer: async (w) => r.transaction(() => steer(r, w)),
  };
}

function leaseStore(r: SqliteRepos): LeaseStore {
  return {
    acquire: async (lease, now) => r.leases.acquire(lease, now),
    refresh: async (subject, owner, expiresAt) => r.leases.refresh(subject, owner, expiresAt),
    release: async (subject, owner) => r.leases.release(subject, owner),
  };
}

function accountStore(r: SqliteRepos): AccountStore {
  const a = r.accounts;
  return {
    get: async (id) => a.get(id),
    byName: async (name) => a.byName(name),
    list: async () => a.list(),
    insert: async (row) => a.insert(row),
    topup: async (id, usd) => a.topup(id, usd),
    setLimits: async (id, limits) => a.setLimits(id, limits),
    charge: async (row) => a.charge(row),
    chargeWithLog: async (row, log, key) =>
      r.transaction(() => {
        // The key first: when it is taken, nothing else is written.
        if (key && !r.idempotency.insertCompletion(row.accountId, key.key, key.row, key.createdAt)) return false;
        a.charge(row);
        r.logs.insert(log);
        return true;
      }),
    ledger: async (accountId) => a.ledger(accountId),
    ledgerSums: async (q) => a.ledgerSums(q),
  };
}

function universeStore(r: SqliteRepos): UniverseStore {
  const u = r.universes;
  return {
    insert: async (row) => u.insert(row),
    get: async (id) => u.get(id),
    matching: async (userId, name, idPrefix, limit) => u.matching(userId, name, idPrefix, limit),
    list: async (userId, limit) => u.list(userId, limit),
    messages: async (universeId) => u.messages(universeId),
    write: async (w) => r.transaction(() => writeUniverse(r, w)),
    request: async (userId, requestId) => u.request(userId, requestId),
    saveRequest: async (row, now) => u.saveRequest(row, now),
    search: (q) => inTurn(() => u.search(q)),
  };
}

/**
 * A search's statement runs on the event loop and may take tens of milliseconds (ranking many
 * large matches): searches run one at a time in the process's lane, each in a turn of its own, so
 * ten at once never hold other requests (/healthz) for ten statements in a row.
 */
function inTurn<T>(query: () => T): Promise<T> {
  return largeWork.run(async () => query());
}

function writeUniverse(r: SqliteRepos, w: UniverseWrite): boolean {
  if (!owns(r, w.lease)) return false;
  const u = r.universes;
  if (w.truncateTo !== undefined) u.truncate(w.universeId, w.truncateTo);
  for (const m of w.append) u.append(w.universeId, m);
  u.touch(w.universeId, w.touch.messages, w.touch.updatedAt);
  if (w.log) r.logs.insert(w.log);
  if (w.request) u.saveRequest(w.request, w.touch.updatedAt);
  if (w.release) r.leases.release(w.lease.subject, w.lease.owner);
  return true;
}

/** The Responses facade's rows (response-repo.ts). */
function responseStore(repos: SqliteRepos): ResponseStore {
  const r = repos.responses;
  return {
    insert: async (row) => r.insert(row),
    get: async (accountId, id) => r.get(accountId, id),
    byKey: async (entityId, key) => r.byKey(entityId, key),
    latest: async (entityId) => r.latest(entityId),
    delete: async (accountId, id) => r.delete(accountId, id),
    conversation: async (accountId, entityId) => r.conversation(accountId, entityId),
    putConversation: async (row) => r.putConversation(row),
  };
}
