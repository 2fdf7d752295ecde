import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { entitySubject, universeSubject } from '../../src/engine/support/lease.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type {
  AccountRow,
  KeyRow,
  BlockRow,
  EntityRow,
  EntityTurnWrite,
  LeaseRow,
  LogRow,
  MessageRow,
  Store,
  UniverseMessageRow,
  UniverseRow,
} from '../../src/store/types.js';
import { type SearchTerms, parseSearch, wordsOf } from '../../src/core/text/search-query.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/** A way to get a `Store`: every implementation passes the same cases. */
interface StoreFactory {
  name: string;
  /** A new blank database (not yet migrated); open it twice for two replicas. */
  blank(): Promise<string>;
  open(target: string): Promise<Store>;
}

const dir = tempDir();
let files = 0;
const factories: StoreFactory[] = [
  { name: 'sqlite', blank: async () => join(dir, `${files++}.db`), open: async (path) => SqliteStore.open(path) },
];

// PostgreSQL: a throwaway cluster (initdb --no-sync, fsync=off: its data is thrown away).
const cluster = await startPostgres('the store contract on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  let n = 0;
  factories.push({
    name: 'postgres',
    blank: async () => cluster.createDatabase(`contract_${n++}`),
    open: (url) => PostgresStore.open(url, { poolSize: 4 }),
  });
}

const T0 = '2026-01-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();
const hexId = () => randomUUID();

describe.each(factories)('store contract: $name', (factory) => {
  const onPostgres = (name: string, fn: () => Promise<void>) => {
    if (factory.name === 'postgres') it(name, fn);
  };
  let s: Store;
  /** A second store on the same database: another replica. */
  let s2: Store;

  beforeAll(async () => {
    const target = await factory.blank();
    s = await factory.open(target);
    s2 = await factory.open(target);
  });
  afterAll(async () => {
    await s?.close();
    await s2?.close();
  });

  /** A stateless completion's log record, owned by the account's user. */
  const logRowFor = (a: AccountRow): LogRow => ({
    id: hexId(), kind: 'text', ownerUserId: a.userId, userId: a.userId, gameId: null, universeId: null, requestId: null, model: 'echo', providerModel: null,
    status: 'ok', error: null, inputTokens: 2, outputTokens: 3, costUsd: 0.25, totalMs: 1, providerMs: 1, createdAt: T0, requestSummary: '{}', responseSummary: '{}',
  });

  /** What `fn` sent to PostgreSQL, one text per statement (every pooled client's query goes through Client.prototype.query). */
  async function statementsOf<T>(fn: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    const texts: string[] = [];
    proto.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      texts.push((typeof q === 'string' ? q : q.text).trim());
      return query.apply(this, args);
    };
    try {
      return { result: await fn(), texts };
    } finally {
      proto.query = query;
    }
  }

  async function account(balanceUsd: number | null = null): Promise<AccountRow> {
    const row: AccountRow = { id: hexId(), name: `acct-${hexId()}`, balanceUsd, userId: randomUUID(), createdAt: T0, rpm: null, tpm: null };
    await s.accounts.insert(row);
    return row;
  }

  function entity(accountId: string, over: Partial<EntityRow> = {}): EntityRow {
    return {
      id: hexId(),
      accountId,
      name: 'ent',
      instructions: 'be brief',
      instructionsTokens: 3,
      model: 'echo',
      state: 'none',
      budgetTokens: 4000,
      capTokens: 100000,
      transcriptMessages: 0,
      transcriptTokens: 0,
      windowTokens: 0,
      windowBlocks: 0,
      recall: 0,
      // No recall bound of its own (the engine's default applies): the column reads back null.
      recallTokens: null,
      // The memory tool off, as a create without it stores it.
      memoryTool: 0,
      createdAt: T0,
      updatedAt: T0,
      ...over,
    };
  }

  const msg = (seq: number, over: Partial<MessageRow> = {}): MessageRow => ({
    seq,
    role: seq % 2 ? 'user' : 'assistant',
    content: `m${seq}`,
    tokens: seq + 1,
    createdAt: at(seq),
    ...over,
  });

  const block = (position: number, over: Partial<BlockRow> = {}): BlockRow => ({
    id: hexId(),
    position,
    kind: 'message',
    role: position % 2 ? 'user' : 'assistant',
    content: `b${position}`,
    tokens: 10 + position,
    coversFrom: position,
    coversTo: position,
    ...over,
  });

  const lease = (subject: LeaseRow['subject'], owner: string, expiresAt: number, over: Partial<LeaseRow> = {}): LeaseRow => ({
    subject,
    owner,
    idempotencyKey: null,
    contentSha256: null,
    expiresAt,
    ...over,
  });

  /** An entity with a stored turn (two messages, two blocks), an idempotency key and a lease held. */
  async function entityWithTurn(acct: AccountRow): Promise<{ e: EntityRow; turn: EntityTurnWrite }> {
    const e = entity(acct.id);
    await s.entities.insert(e);
    const owner = `owner-${hexId()}`;
    expect(await s.leases.acquire(lease(entitySubject(e.id), owner, 10_000), 0)).toBeNull();
    const turn: EntityTurnWrite = {
      entityId: e.id,
      lease: { subject: entitySubject(e.id), owner },
      messages: [msg(1, { role: 'user' }), msg(2, { role: 'assistant' })],
      deleteBlockIds: [],
      insertBlocks: [block(1, { role: 'user' }), block(2, { role: 'assistant' })],
      counters: { transcriptMessages: 2, transcriptTokens: 5, windowTokens: 23, windowBlocks: 2, updatedAt: at(10) },
      charge: { accountId: acct.id, entityId: e.id, keyId: 'key-of-the-turn', model: 'echo', inputTokens: 2, outputTokens: 3, costUsd: 0.25, createdAt: at(10) },
      idempotency: { key: 'idem-1', row: { contentSha256: 'abc', completion: '{"id":"c1"}' }, createdAt: at(10) },
    };
    return { e, turn };
  }

  describe('entities', () => {
    it('inserts and gets a row exactly (numbers as numbers), only within its account', async () => {
      const a = await account();
      const e = entity(a.id, { transcriptTokens: 2 ** 40, instructionsTokens: 7 });
      await s.entities.insert(e);
      expect(await s.entities.get(a.id, e.id)).toStrictEqual(e);
      expect(await s.entities.get((await account()).id, e.id)).toBeUndefined();
      expect(await s.entities.get(a.id, hexId())).toBeUndefined();
    });

    it('lists most recently active first, ties newest-inserted first, a page at a time', async () => {
      const a = await account();
      const old = entity(a.id, { updatedAt: at(1) });
      const tieFirst = entity(a.id, { updatedAt: at(5) });
      const tieSecond = entity(a.id, { updatedAt: at(5) });
      const newest = entity(a.id, { updatedAt: at(9) });
      for (const e of [old, tieFirst, tieSecond, newest]) await s.entities.insert(e);
      await s.entities.insert(entity((await account()).id, { updatedAt: at(99) }));
      const ids = (rows: EntityRow[]) => rows.map((r) => r.id);
      expect(ids(await s.entities.list(a.id, 10))).toEqual([newest.id, tieSecond.id, tieFirst.id, old.id]);
      expect(ids(await s.entities.list(a.id, 2))).toEqual([newest.id, tieSecond.id]);
      expect(ids(await s.entities.list(a.id, 2, 2))).toEqual([tieFirst.id, old.id]);
      expect(await s.entities.list(a.id, 2, 4)).toEqual([]);
    });

    it('matches by exact name or by id prefix, in activity order, at most limit', async () => {
      const a = await account();
      const x = entity(a.id, { id: 'abc12345-0000-4000-8000-000000000001', name: 'alpha', updatedAt: at(1) });
      const y = entity(a.id, { id: 'abc99999-0000-4000-8000-000000000002', name: 'beta', updatedAt: at(2) });
      const z = entity(a.id, { id: 'f0000000-0000-4000-8000-000000000003', name: 'alpha', updatedAt: at(3) });
      const other = await account();
      const elsewhere = entity(other.id, { id: 'abc00000-0000-4000-8000-000000000004', name: 'alpha' });
      for (const e of [x, y, z, elsewhere]) await s.entities.insert(e);
      const ids = (rows: EntityRow[]) => rows.map((r) => r.id);
      expect(ids(await s.entities.matching(a.id, 'alpha', null, 10))).toEqual([z.id, x.id]);
      expect(ids(await s.entities.matching(a.id, 'nope', 'abc', 10))).toEqual([y.id, x.id]);
      expect(ids(await s.entities.matching(a.id, 'nope', 'abc1', 10))).toEqual([x.id]);
      expect(ids(await s.entities.matching(a.id, 'alpha', 'abc9', 10))).toEqual([z.id, y.id, x.id]);
      expect(ids(await s.entities.matching(a.id, 'alpha', 'abc9', 2))).toEqual([z.id, y.id]);
      expect(await s.entities.matching(a.id, 'ALPHA', 'abd', 10)).toEqual([]);
    });

    it('deletes an entity with its messages, blocks, idempotency keys and lease', async () => {
      const a = await account();
      const { e, turn } = await entityWithTurn(a);
      expect(await s.entities.commitTurn(turn)).toBe(true);
      const holder = `holder-${hexId()}`;
      expect(await s.leases.acquire(lease(entitySubject(e.id), holder, 10_000), 0)).toBeNull();
      expect(await s.entities.delete((await account()).id, e.id)).toBe(false);
      expect(await s.entities.delete(a.id, e.id)).toBe(true);
      expect(await s.entities.get(a.id, e.id)).toBeUndefined();
      expect(await s.entities.messages(e.id, 0, 100)).toEqual([]);
      expect(await s.entities.window(e.id)).toEqual([]);
      expect(await s.idempotency.get(e.id, 'idem-1')).toBeUndefined();
      // The lease went with it: another owner takes the subject at once.
      expect(await s.leases.acquire(lease(entitySubject(e.id), 'someone-else', 10_000), 0)).toBeNull();
      expect(await s.entities.delete(a.id, e.id)).toBe(false);
      // The ledger is history: the charge stays.
      expect(await s.accounts.ledger(a.id)).toHaveLength(1);
    });

    it('pages messages by seq, and up to a maximum seq', async () => {
      const a = await account();
      const e = entity(a.id);
      await s.entities.insert(e);
      await s.entities.importEntity({ entity: { ...e, id: hexId() }, messages: [], blocks: [], keepIds: false });
      const imported = entity(a.id);
      const all = [1, 2, 3, 4, 5, 6, 7].map((n) => msg(n));
      expect(await s.entities.importEntity({ entity: imported, messages: all, blocks: [], keepIds: true })).toBeNull();
      expect(await s.entities.messages(imported.id, 0, 3)).toStrictEqual(all.slice(0, 3));
      expect(await s.entities.messages(imported.id, 3, 3)).toStrictEqual(all.slice(3, 6));
      expect(await s.entities.messages(imported.id, 6, 3)).toStrictEqual(all.slice(6));
      expect(await s.entities.messages(imported.id, 7, 3)).toEqual([]);
      expect(await s.entities.messagesUpTo(imported.id, 2, 5, 100)).toStrictEqual(all.slice(2, 5));
      expect(await s.entities.messagesUpTo(imported.id, 2, 5, 2)).toStrictEqual(all.slice(2, 4));
      expect(await s.entities.messages(e.id, 0, 10)).toEqual([]);
    });

    it('returns the window in position order, whatever the insert order', async () => {
      const a = await account();
      const e = entity(a.id);
      const blocks = [block(3), block(1, { kind: 'summary', role: 'system', coversFrom: 1, coversTo: 6 }), block(2)];
      expect(await s.entities.importEntity({ entity: e, messages: [], blocks, keepIds: true })).toBeNull();
      expect(await s.entities.window(e.id)).toStrictEqual([blocks[1], blocks[2], blocks[0]]);
    });

    it('updates only the head fields given and returns the row; undefined when not there', async () => {
      const a = await account();
      const e = entity(a.id, { transcriptMessages: 4, windowTokens: 40 });
      await s.entities.insert(e);
      const named = await s.entities.updateHead(a.id, e.id, { name: 'renamed', updatedAt: at(20) });
      expect(named).toStrictEqual({ ...e, name: 'renamed', updatedAt: at(20) });
      const more = await s.entities.updateHead(a.id, e.id, {
        instructions: 'new', instructionsTokens: 1, budgetTokens: 99, updatedAt: at(21),
      });
      expect(more).toStrictEqual({ ...e, name: 'renamed', instructions: 'new', instructionsTokens: 1, budgetTokens: 99, updatedAt: at(21) });
      expect(await s.entities.get(a.id, e.id)).toStrictEqual(more);
      // The recall bound: set alone, then kept by an update that does not name it.
      const bounded = await s.entities.updateHead(a.id, e.id, { recall: 2, recallTokens: 45, updatedAt: at(21) });
      expect(bounded).toStrictEqual({ ...more, recall: 2, recallTokens: 45 });
      expect(await s.entities.updateHead(a.id, e.id, { name: 'renamed', updatedAt: at(21) })).toStrictEqual(bounded);
      const own = entity(a.id, { recall: 2, recallTokens: 120 });
      await s.entities.insert(own);
      expect(await s.entities.get(a.id, own.id)).toStrictEqual(own);
      expect(await s.entities.updateHead((await account()).id, e.id, { name: 'x', updatedAt: at(22) })).toBeUndefined();
      expect(await s.entities.updateHead(a.id, hexId(), { name: 'x', updatedAt: at(22) })).toBeUndefined();
    });

    it('snapshots the head with its window, its window history and its pinned memory', async () => {
      const a = await account();
      const { e, turn } = await entityWithTurn(a);
      await s.entities.commitTurn(turn);
      const limits = { blocks: 4, tokens: 100 };
      await s.memory.write({ entityId: e.id, label: 'user', text: 'Ada', tokens: 1, source: 'user', at: at(30), limits });
      await s.memory.write({ entityId: e.id, label: 'user', text: 'Ada Lovelace', tokens: 2, source: 'model', at: at(31), limits });
      const snap = await s.entities.snapshot(a.id, e.id);
      const memory = {
        blocks: [{ label: 'user', text: 'Ada Lovelace', tokens: 2, updatedAt: at(31) }],
        history: [
          { label: 'user', before: null, after: 'Ada', source: 'user', createdAt: at(30) },
          { label: 'user', before: 'Ada', after: 'Ada Lovelace', source: 'model', createdAt: at(31) },
        ],
      };
      expect(snap).toStrictEqual({ entity: { ...e, ...turn.counters }, window: turn.insertBlocks, history: { rotations: [], heads: [], turns: [] }, memory });
      expect(await s.entities.snapshot((await account()).id, e.id)).toBeUndefined();
    });
  });

  describe('commitTurn', () => {
    it('stores messages, window, counters, charge, idempotency and frees the lease, together', async () => {
      const a = await account(1);
      const { e, turn } = await entityWithTurn(a);
      expect(await s.entities.commitTurn(turn)).toBe(true);
      expect(await s.entities.messages(e.id, 0, 10)).toStrictEqual(turn.messages);
      expect(await s.entities.window(e.id)).toStrictEqual(turn.insertBlocks);
      expect(await s.entities.get(a.id, e.id)).toStrictEqual({ ...e, ...turn.counters });
      expect(await s.accounts.ledger(a.id)).toStrictEqual([turn.charge]);
      expect((await s.accounts.get(a.id))?.balanceUsd).toBe(0.75);
      expect(await s.idempotency.get(e.id, 'idem-1')).toStrictEqual(turn.idempotency?.row);
      expect(await s.idempotency.get(e.id, 'other')).toBeUndefined();
      // Freed: another owner takes it without waiting for the expiry.
      expect(await s.leases.acquire(lease(entitySubject(e.id), 'next', 10_000), 0)).toBeNull();
    });

    // Each statement is a round trip that holds a pooled connection (and, in a commit, the entity's
    // locks): a turn's writes go as one statement, and a lease won or a stateless charge is one.
    // Only PostgreSQL sends statements over a connection: on SQLite the test is not registered, not skipped.
    onPostgres('sends a turn commit as BEGIN, the lease, one statement of rows, COMMIT; a lease won and a charge with its log in one', async () => {
      const a = await account(1);
      const { e, turn } = await entityWithTurn(a);
      const sent = await statementsOf(() => s.entities.commitTurn(turn));
      expect(sent.result).toBe(true);
      expect(sent.texts.map((t) => t.split(/\s/)[0])).toEqual(['BEGIN', 'DELETE', 'WITH', 'COMMIT']);
      expect(await s.entities.messages(e.id, 0, 10)).toStrictEqual(turn.messages);
      expect(await s.accounts.ledger(a.id)).toStrictEqual([turn.charge]);
      expect(await s.idempotency.get(e.id, 'idem-1')).toStrictEqual(turn.idempotency?.row);
      const won = await statementsOf(() => s.leases.acquire(lease(entitySubject(e.id), 'next', 10_000), 0));
      expect(won).toMatchObject({ result: null, texts: [expect.stringMatching(/^INSERT INTO turn_leases/)] });
      const log = { ...logRowFor(a), id: hexId() };
      const charged = await statementsOf(() => s.accounts.chargeWithLog({ ...turn.charge, entityId: null }, log));
      expect(charged).toMatchObject({ result: true, texts: [expect.stringMatching(/^WITH w0 AS \(INSERT INTO ledger/)] });
      expect((await s.accounts.get(a.id))?.balanceUsd).toBe(0.5);
    });

    it('replaces folded blocks with the summary in the same write', async () => {
      const a = await account();
      const { e, turn } = await entityWithTurn(a);
      await s.entities.commitTurn(turn);
      const owner = 'turn-2';
      await s.leases.acquire(lease(entitySubject(e.id), owner, 10_000), 0);
      const summary = block(1, { kind: 'summary', role: 'system', coversFrom: 1, coversTo: 2 });
      const next: EntityTurnWrite = {
        ...turn,
        lease: { subject: entitySubject(e.id), owner },
        messages: [msg(3, { role: 'user' }), msg(4, { role: 'assistant' })],
        deleteBlockIds: turn.insertBlocks.map((b) => b.id),
        insertBlocks: [summary, block(2, { role: 'user', coversFrom: 3, coversTo: 3 }), block(3, { role: 'assistant', coversFrom: 4, coversTo: 4 })],
        counters: { transcriptMessages: 4, transcriptTokens: 12, windowTokens: 36, windowBlocks: 3, updatedAt: at(30) },
        idempotency: undefined,
      };
      expect(await s.entities.commitTurn(next)).toBe(true);
      expect(await s.entities.window(e.id)).toStrictEqual(next.insertBlocks);
      expect((await s.entities.messages(e.id, 0, 10)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    });

    it('writes nothing and answers false when the lease is not ours', async () => {
      const a = await account(1);
      const { e, turn } = await entityWithTurn(a);
      // Our lease expired and another replica took it.
      expect(await s2.leases.acquire(lease(entitySubject(e.id), 'thief', 50_000), 20_000)).toBeNull();
      expect(await s.entities.commitTurn(turn)).toBe(false);
      expect(await s.entities.messages(e.id, 0, 10)).toEqual([]);
      expect(await s.entities.window(e.id)).toEqual([]);
      expect(await s.entities.get(a.id, e.id)).toStrictEqual(e);
      expect(await s.accounts.ledger(a.id)).toEqual([]);
      expect((await s.accounts.get(a.id))?.balanceUsd).toBe(1);
      expect(await s.idempotency.get(e.id, 'idem-1')).toBeUndefined();
      // The thief's lease is untouched.
      expect(await s.leases.acquire(lease(entitySubject(e.id), 'third', 50_000), 20_001)).toMatchObject({ owner: 'thief' });
      // Without any lease row at all, also false.
      await s.leases.release(entitySubject(e.id), 'thief');
      expect(await s.entities.commitTurn(turn)).toBe(false);
      expect(await s.entities.messages(e.id, 0, 10)).toEqual([]);
    });

    it('creates the entity with its turn when asked (a branch), and neither when the lease is not ours or the id is taken', async () => {
      const a = await account(1);
      const e = entity(a.id, { transcriptMessages: 2, transcriptTokens: 5, windowTokens: 23, windowBlocks: 2 });
      const history = [msg(1, { role: 'user' }), msg(2, { role: 'assistant' })];
      const create = { entity: e, messages: history, blocks: [block(1, { role: 'user' }), block(2, { role: 'assistant' })], keepIds: true };
      const owner = `owner-${hexId()}`;
      const claim = { subject: entitySubject(e.id), owner };
      const turn: EntityTurnWrite = {
        entityId: e.id,
        lease: claim,
        create,
        messages: [msg(3, { role: 'user' }), msg(4, { role: 'assistant' })],
        deleteBlockIds: [],
        insertBlocks: [block(3, { role: 'user', coversFrom: 3, coversTo: 3 }), block(4, { role: 'assistant', coversFrom: 4, coversTo: 4 })],
        counters: { transcriptMessages: 4, transcriptTokens: 12, windowTokens: 50, windowBlocks: 4, updatedAt: at(20) },
        charge: { accountId: a.id, entityId: e.id, keyId: null, model: 'echo', inputTokens: 4, outputTokens: 5, costUsd: 0.5, createdAt: at(20) },
        idempotency: { key: 'fork', row: { contentSha256: 'abc', completion: '{"id":"c1"}' }, createdAt: at(20) },
      };
      // No lease: nothing at all, not even the entity.
      expect(await s.entities.commitTurn(turn)).toBe(false);
      expect(await s.entities.get(a.id, e.id)).toBeUndefined();
      expect(await s.accounts.ledger(a.id)).toEqual([]);

      expect(await s.leases.acquire(lease(entitySubject(e.id), owner, 10_000), 0)).toBeNull();
      expect(await s.entities.commitTurn(turn)).toBe(true);
      expect(await s.entities.get(a.id, e.id)).toStrictEqual({ ...e, ...turn.counters });
      expect(await s.entities.messages(e.id, 0, 10)).toStrictEqual([...history, ...turn.messages]);
      expect(await s.entities.window(e.id)).toStrictEqual([...create.blocks, ...turn.insertBlocks]);
      expect(await s.accounts.ledger(a.id)).toStrictEqual([turn.charge]);
      expect(await s.idempotency.get(e.id, 'fork')).toStrictEqual(turn.idempotency?.row);

      // The same id again (another lease holder after this one): the taken id writes nothing.
      await s.leases.acquire(lease(entitySubject(e.id), 'again', 10_000), 0);
      const again = { ...turn, lease: { ...claim, owner: 'again' }, idempotency: undefined };
      expect(await s.entities.commitTurn(again)).toBe(false);
      expect(await s.entities.messages(e.id, 0, 10)).toHaveLength(4);
      expect(await s.accounts.ledger(a.id)).toHaveLength(1);
    });

    it('rolls back everything when a write inside fails', async () => {
      const a = await account(1);
      const { e, turn } = await entityWithTurn(a);
      // A block id clash (block ids are global) fails the last insert of the turn.
      const clash = entity(a.id);
      await s.entities.importEntity({ entity: clash, messages: [], blocks: [turn.insertBlocks[1]], keepIds: true });
      await expect(s.entities.commitTurn(turn)).rejects.toThrow();
      expect(await s.entities.messages(e.id, 0, 10)).toEqual([]);
      expect(await s.accounts.ledger(a.id)).toEqual([]);
      expect((await s.accounts.get(a.id))?.balanceUsd).toBe(1);
      // The lease is still ours: the failed commit did not free it.
      expect(await s.leases.acquire(lease(entitySubject(e.id), 'other', 10_000), 0)).toMatchObject({ owner: turn.lease.owner });
    });
  });

  describe('importEntity', () => {
    it('writes the entity whole, and with kept ids reports the first id taken, writing nothing', async () => {
      const a = await account();
      const e = entity(a.id, { transcriptMessages: 2, windowBlocks: 2 });
      const blocks = [block(1), block(2)];
      const messages = [msg(1), msg(2)];
      expect(await s.entities.importEntity({ entity: e, messages, blocks, keepIds: true })).toBeNull();
      expect(await s.entities.get(a.id, e.id)).toStrictEqual(e);
      expect(await s.entities.messages(e.id, 0, 10)).toStrictEqual(messages);
      expect(await s.entities.window(e.id)).toStrictEqual(blocks);

      // The entity id is taken (in any account).
      const other = await account();
      expect(await s.entities.importEntity({ entity: { ...e, accountId: other.id }, messages, blocks: [], keepIds: true }))
        .toEqual({ taken: 'entity', id: e.id });
      // A block id is taken: the first one in the import's order.
      const e2 = entity(other.id);
      const fresh = block(1);
      expect(await s.entities.importEntity({ entity: e2, messages, blocks: [fresh, blocks[1], blocks[0]], keepIds: true }))
        .toEqual({ taken: 'block', id: blocks[1].id });
      expect(await s.entities.get(other.id, e2.id)).toBeUndefined();
      expect(await s.entities.messages(e2.id, 0, 10)).toEqual([]);
      expect(await s.entities.window(e2.id)).toEqual([]);
    });

    it('lets exactly one of two concurrent imports with the same kept ids through', async () => {
      const a = await account();
      const e = entity(a.id);
      const blocks = [block(1)];
      const results = await Promise.all([
        s.entities.importEntity({ entity: e, messages: [msg(1)], blocks, keepIds: true }),
        s2.entities.importEntity({ entity: e, messages: [msg(1)], blocks, keepIds: true }),
      ]);
      expect(results.filter((r) => r === null)).toHaveLength(1);
      expect(results.find((r) => r !== null)).toEqual({ taken: 'entity', id: e.id });
      expect(await s.entities.messages(e.id, 0, 10)).toHaveLength(1);
    });
  });

  describe('importChat (issue 35)', () => {
    it('creates an entity with its source row, appends under the lease, moves the row on; not ours: nothing', async () => {
      const a = await account();
      const e = entity(a.id, { transcriptMessages: 2, windowBlocks: 2 });
      const src = { accountId: a.id, source: 'chatgpt', sourceId: `conv-${hexId()}`, target: '', entityId: e.id, lastMessageId: 'n2', sourceMessages: 2, importedAt: at(1) };
      const blocks = [block(1), block(2)];
      expect(await s.entities.importChat({ create: { entity: e, messages: [msg(1), msg(2)], blocks, keepIds: false }, source: src })).toBe(true);
      expect(await s2.entities.importSources(a.id, 'chatgpt', [src.sourceId, 'other'])).toStrictEqual([src]);
      expect(await s.entities.importSources(a.id, 'claude', [src.sourceId])).toEqual([]);

      const owner = `import-${hexId()}`;
      await s.leases.acquire(lease(entitySubject(e.id), owner, 10_000), 0);
      const summary = block(1, { kind: 'summary', role: 'system', coversFrom: 1, coversTo: 3 });
      const append = {
        entityId: e.id,
        lease: { subject: entitySubject(e.id), owner },
        messages: [msg(3), msg(4)],
        deleteBlockIds: blocks.map((b) => b.id),
        insertBlocks: [summary, block(4, { coversFrom: 4, coversTo: 4 })],
        counters: { transcriptMessages: 4, transcriptTokens: 14, windowTokens: 25, windowBlocks: 2, updatedAt: at(5) },
      };
      const moved = { ...src, lastMessageId: 'n4', sourceMessages: 4, importedAt: at(5) };
      expect(await s.entities.importChat({ append, source: moved })).toBe(true);
      expect(await s.entities.window(e.id)).toStrictEqual(append.insertBlocks);
      expect((await s.entities.messages(e.id, 0, 10)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
      expect(await s.entities.get(a.id, e.id)).toStrictEqual({ ...e, ...append.counters });
      expect(await s.entities.importSources(a.id, 'chatgpt', [src.sourceId])).toStrictEqual([moved]);
      // The lease is still held by the import (it frees it when the run ends).
      expect(await s.leases.acquire(lease(entitySubject(e.id), 'other', 10_000), 0)).not.toBeNull();

      // Another owner took the lease: nothing of the append, nor the source row, is written.
      expect(await s2.leases.acquire(lease(entitySubject(e.id), 'thief', 50_000), 20_000)).toBeNull();
      const late = { ...append, messages: [msg(5), msg(6)], insertBlocks: [block(5)], deleteBlockIds: [] };
      expect(await s.entities.importChat({ append: late, source: { ...moved, sourceMessages: 6 } })).toBe(false);
      expect((await s.entities.messages(e.id, 0, 10)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
      expect(await s.entities.importSources(a.id, 'chatgpt', [src.sourceId])).toStrictEqual([moved]);

      // Deleting the entity forgets where its conversations went: a re-import makes it anew.
      await s.entities.delete(a.id, e.id);
      expect(await s.entities.importSources(a.id, 'chatgpt', [src.sourceId])).toEqual([]);
    });
  });

  describe('search', () => {
    const VOCAB = ['apple', 'apricot', 'banana', 'band', 'cherry', 'zanzibar42', 'harbour', 'kite', 'Kite', 'café'];
    /** A seeded generator, so a failure repeats. */
    function rng(seed: number): () => number {
      return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    }
    const pick = <T,>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const sentence = (r: () => number) => Array.from({ length: 2 + Math.floor(r() * 6) }, () => pick(r, VOCAB)).join(pick(r, [' ', ', ', '. ', ' - ']));

    /** What a search should find, by scanning every stored message with the query's own word rules. */
    function scan(model: Map<string, { accountId: string; messages: MessageRow[] }>, accountId: string, terms: SearchTerms): string[] {
      const out: string[] = [];
      for (const [id, e] of model) {
        if (e.accountId !== accountId) continue;
        for (const m of e.messages) if (matches(wordsOf(m.content), terms)) out.push(`${id}#${m.seq}`);
      }
      return out.sort();
    }
    function matches(words: string[], terms: SearchTerms): boolean {
      return terms.clauses.every((c) => {
        if (c.kind === 'word') return words.includes(c.word);
        if (c.kind === 'prefix') return words.some((w) => w.startsWith(c.word));
        return words.some((_, i) => c.words.every((w, k) => words[i + k] === w));
      });
    }

    it('finds exactly what a scan finds, through imports, turns and deletes (a seeded random walk)', async () => {
      const r = rng(factory.name === 'sqlite' ? 7 : 11);
      const accounts = [await account(), await account()];
      const model = new Map<string, { accountId: string; messages: MessageRow[] }>();
      const queries = ['apple', 'ap*', 'band', 'ban*', '"banana band"', 'kite cherry', 'zanzibar42', 'café', 'CAFÉ harbour', 'k*'];
      for (let step = 0; step < 30; step++) {
        const op = r();
        if (op < 0.5 || model.size === 0) {
          const a = pick(r, accounts);
          const e = entity(a.id);
          const messages = Array.from({ length: 1 + Math.floor(r() * 8) }, (_, i) => msg(i + 1, { content: sentence(r) }));
          expect(await s.entities.importEntity({ entity: { ...e, transcriptMessages: messages.length }, messages, blocks: [], keepIds: true })).toBeNull();
          model.set(e.id, { accountId: a.id, messages });
        } else if (op < 0.75) {
          const id = pick(r, [...model.keys()]);
          expect(await s.entities.delete(model.get(id)!.accountId, id)).toBe(true);
          model.delete(id);
        } else {
          const a = pick(r, accounts);
          const { e, turn } = await entityWithTurn(a);
          turn.messages = turn.messages.map((m) => ({ ...m, content: sentence(r) }));
          expect(await s.entities.commitTurn(turn)).toBe(true);
          model.set(e.id, { accountId: a.id, messages: turn.messages });
        }
        for (const q of queries) {
          const terms = parseSearch(q);
          for (const a of accounts) {
            const hits = await s.entities.search({ accountId: a.id, terms, limit: 500 });
            expect(hits.map((h) => `${h.entityId}#${h.seq}`).sort(), `step ${step}, ${JSON.stringify(q)}`).toEqual(scan(model, a.id, terms));
          }
        }
      }
    });

    it('ranks by relevance, newest first among equals, and filters by entity, role and time', async () => {
      const a = await account();
      const e = entity(a.id);
      const messages = [
        msg(1, { content: 'kite', createdAt: at(1) }),
        msg(2, { content: 'kite', createdAt: at(2) }),
        msg(3, { content: 'a kite, a kite, a kite and a very long tail of other words about the harbour', createdAt: at(3) }),
      ];
      await s.entities.importEntity({ entity: e, messages, blocks: [], keepIds: true });
      const terms = parseSearch('kite');
      const hits = await s.entities.search({ accountId: a.id, terms, limit: 10 });
      expect(hits.slice(0, 2).map((h) => h.seq)).toEqual([2, 1]);
      expect(hits[0]).toMatchObject({ entityId: e.id, entityName: 'ent', role: 'assistant', content: 'kite', createdAt: at(2) });
      expect((await s.entities.search({ accountId: a.id, terms, role: 'user', limit: 10 })).map((h) => h.seq).sort()).toEqual([1, 3]);
      expect((await s.entities.search({ accountId: a.id, terms, since: at(2), limit: 10 })).map((h) => h.seq).sort()).toEqual([2, 3]);
      expect(await s.entities.search({ accountId: a.id, terms, entityIds: [hexId()], limit: 10 })).toEqual([]);
      expect(await s.entities.search({ accountId: a.id, terms, limit: 1 })).toHaveLength(1);
    });

    it('a query of many clauses still needs every one (SQLite ranks by the first 16: bm25 costs matches times phrases)', async () => {
      const a = await account();
      const words = Array.from({ length: 20 }, (_, i) => `w${i}x`);
      const messages = [
        msg(1, { content: words.join(' ') }),
        msg(2, { content: words.slice(0, 19).join(' ') }),
        msg(3, { content: `${words.join(' ')} ${words.slice(0, 4).join(' ')}` }),
      ];
      await s.entities.importEntity({ entity: entity(a.id), messages, blocks: [], keepIds: true });
      const hits = await s.entities.search({ accountId: a.id, terms: parseSearch(`${words.slice(0, 18).join(' ')} "w18x w19x"`), limit: 10 });
      expect(hits.map((h) => h.seq).sort()).toEqual([1, 3]);
    });

    it('ranked search (issue 32): any word by its stem, the most relevant first with a score, filtered as search is; messagesAt reads seqs', async () => {
      const a = await account();
      const e = entity(a.id);
      const messages = [
        msg(1, { content: 'My sister moved to Lisbon to teach chemistry', createdAt: at(1) }),
        msg(2, { content: 'Lisbon is lovely in spring', createdAt: at(2) }),
        msg(3, { content: 'We talked about the harbour and nothing else', createdAt: at(3) }),
        msg(4, { content: 'Moving house is hard', createdAt: at(4) }),
      ];
      await s.entities.importEntity({ entity: { ...e, transcriptMessages: 4 }, messages, blocks: [], keepIds: true });
      // "teaching" and "moves" share only stems with the first message; it matches both, so it ranks first.
      const hits = await s.entities.searchAny({ accountId: a.id, words: ['teaching', 'moves', 'sisters'], limit: 10 });
      expect(hits[0]).toMatchObject({ entityId: e.id, seq: 1, role: 'user', content: messages[0].content });
      expect(hits.map((h) => h.seq).sort()).toEqual([1, 4]);
      expect(hits[0].score!).toBeGreaterThan(hits[1].score!);
      expect(hits[1].score!).toBeGreaterThan(0);
      expect((await s.entities.searchAny({ accountId: a.id, words: ['lisbon'], beforeSeq: 2, limit: 10 })).map((h) => h.seq)).toEqual([1]);
      expect((await s.entities.searchAny({ accountId: a.id, words: ['lisbon'], role: 'assistant', limit: 10 })).map((h) => h.seq)).toEqual([2]);
      expect(await s.entities.searchAny({ accountId: a.id, words: ['lisbon'], entityIds: [hexId()], limit: 10 })).toEqual([]);
      expect(await s.entities.searchAny({ accountId: (await account()).id, words: ['lisbon'], limit: 10 })).toEqual([]);
      expect(await s.entities.searchAny({ accountId: a.id, words: ['astronomy'], limit: 10 })).toEqual([]);
      expect((await s.entities.messagesAt(e.id, [4, 2, 9])).map((m) => m.seq)).toEqual([2, 4]);
    });

    it('term matches (issue 43): the entity\'s own messages each term matches by any form, a word by its stem and a phrase as adjacent words, before a seq; null from a cap on', async () => {
      const a = await account();
      const e = entity(a.id);
      const other = entity(a.id);
      const stranger = entity((await account()).id);
      const messages = [
        msg(1, { content: 'Theo and I are doing a road trip down the coast', tokens: 11 }),
        msg(2, { content: 'I drew a portrait of Grandpa from an old photo', tokens: 10 }),
        msg(3, { content: 'The trip to the road works took all day', tokens: 9 }),
        msg(4, { content: 'Drawing lessons start on Monday, another road trip later', tokens: 9 }),
      ];
      await s.entities.importEntity({ entity: { ...e, transcriptMessages: 4 }, messages, blocks: [], keepIds: true });
      // Another entity of the account and another account's use the same words many times: never counted here.
      const many = Array.from({ length: 30 }, (_, i) => msg(i + 1, { content: `road trip drawing portrait ${i}` }));
      await s.entities.importEntity({ entity: { ...other, transcriptMessages: 30 }, messages: many, blocks: [], keepIds: true });
      await s.entities.importEntity({ entity: { ...stranger, transcriptMessages: 30 }, messages: many, blocks: [], keepIds: true });
      const seqs = (found: Array<{ seq: number }[] | null>) => found.map((f) => f && f.map((m) => m.seq).sort((x, y) => x - y));
      const q = { entityId: e.id, cap: 100 };
      // "drawing" by its stem matches message 4; "drew" is a form of its own; the phrase matches adjacent words only.
      expect(seqs(await s.entities.termMatches({ ...q, terms: [['drawing'], ['drawing', 'drew'], ['road trip'], ['portraits'], ['astronomy'], []] }))).toEqual([[4], [2, 4], [1, 4], [2], [], []]);
      expect(await s.entities.termMatches({ ...q, terms: [['portrait']] })).toEqual([[{ seq: 2, tokens: 10 }]]);
      expect(seqs(await s.entities.termMatches({ ...q, terms: [['road trip']], beforeSeq: 4 }))).toEqual([[1]]);
      // A term with cap matches or more is too common to rank by: null, its matches not read.
      expect(seqs(await s.entities.termMatches({ ...q, terms: [['road'], ['portrait'], ['road trip']], cap: 2 }))).toEqual([null, [2], null]);
      expect(seqs(await s.entities.termMatches({ ...q, terms: [['road trip']], cap: 3 }))).toEqual([[1, 4]]);
      expect(seqs(await s.entities.termMatches({ ...q, entityId: other.id, terms: [['grandpa']] }))).toEqual([[]]);
    });
  });

  describe('vectors (semantic recall)', () => {
    const v = (...xs: number[]) => Float32Array.from(xs);
    const seqsOf = (rows: Array<{ seq: number }>) => rows.map((r) => r.seq);

    it('keeps one vector per message with its model: what is missing newest first, a model change replaces, floats exact, a deleted entity takes them', async () => {
      const a = await account();
      const e = entity(a.id);
      const other = entity(a.id);
      const messages = [1, 2, 3, 4, 5].map((seq) => msg(seq));
      await s.entities.importEntity({ entity: { ...e, transcriptMessages: 5 }, messages, blocks: [], keepIds: true });
      await s.entities.importEntity({ entity: { ...other, transcriptMessages: 2 }, messages: messages.slice(0, 2), blocks: [], keepIds: true });
      expect(await s.vectors.unembedded(e.id, 'm1', 3)).toEqual([{ seq: 5, content: 'm5' }, { seq: 4, content: 'm4' }, { seq: 3, content: 'm3' }]);
      // A float32 is stored exactly, tiny and negative values and all; a seq with no message is skipped.
      const exact = v(0.1, -2.5e-7, 3.4e38, -0);
      await s.vectors.put(e.id, 'm1', [{ seq: 2, vector: exact }, { seq: 4, vector: v(1, 2, 3, 4) }, { seq: 9, vector: v(9, 9, 9, 9) }]);
      const stored = await s.vectors.vectors(e.id, 'm1', undefined);
      expect(seqsOf(stored)).toEqual([2, 4]);
      expect(stored[0].vector).toBeInstanceOf(Float32Array);
      expect([...stored[0].vector]).toEqual([...exact]);
      expect(seqsOf(await s.vectors.vectors(e.id, 'm1', 4))).toEqual([2]);
      expect(seqsOf(await s.vectors.unembedded(e.id, 'm1', 10))).toEqual([5, 3, 1]);
      // Another entity's messages and another model's vectors are apart.
      expect(await s.vectors.vectors(other.id, 'm1', undefined)).toEqual([]);
      expect(seqsOf(await s.vectors.unembedded(e.id, 'm2', 10))).toEqual([5, 4, 3, 2, 1]);
      // A put from another model replaces the message's vector: one per message, never compared across models.
      await s.vectors.put(e.id, 'm2', [{ seq: 4, vector: v(5, 6) }]);
      expect(seqsOf(await s.vectors.vectors(e.id, 'm1', undefined))).toEqual([2]);
      expect((await s.vectors.vectors(e.id, 'm2', undefined)).map((r) => [...r.vector])).toEqual([[5, 6]]);
      expect(seqsOf(await s.vectors.unembedded(e.id, 'm1', 10))).toEqual([5, 4, 3, 1]);
      expect([await s.vectors.count(e.id, 'm1'), await s.vectors.count(e.id, 'm2'), await s.vectors.count(other.id, 'm1')]).toEqual([1, 1, 0]);
      // A put for an entity deleted meanwhile writes nothing and fails nothing; the deletion took its vectors.
      expect(await s.entities.delete(a.id, e.id)).toBe(true);
      await s.vectors.put(e.id, 'm1', [{ seq: 1, vector: v(1) }]);
      expect(await s.vectors.vectors(e.id, 'm1', undefined)).toEqual([]);
      expect(await s.vectors.vectors(e.id, 'm2', undefined)).toEqual([]);
      // Seen by another replica of the database.
      await s.vectors.put(other.id, 'm1', [{ seq: 1, vector: v(7, 8) }]);
      expect((await s2.vectors.vectors(other.id, 'm1', undefined)).map((r) => [...r.vector])).toEqual([[7, 8]]);
    });
  });

  describe('universes', () => {
    function universe(userId: string, over: Partial<UniverseRow> = {}): UniverseRow {
      return {
        id: hexId(),
        userId,
        displayName: null,
        storedPrompt: 'p',
        promptText: 'prompt text',
        responseFormat: null,
        additionalInstructions: null,
        promptFingerprint: 'fp',
        messages: 0,
        createdAt: T0,
        updatedAt: T0,
        ...over,
      };
    }
    const umsg = (seq: number, over: Partial<UniverseMessageRow> = {}): UniverseMessageRow => ({
      seq,
      role: 'user',
      content: `u${seq}`,
      toolCalls: null,
      toolCallId: null,
      toolName: null,
      toolOk: null,
      createdAt: at(seq),
      ...over,
    });

    it('inserts, gets, lists and matches universes of one user', async () => {
      const user = randomUUID();
      const u1 = universe(user, { id: 'aa000000-0000-4000-8000-000000000001', displayName: 'world', updatedAt: at(1), responseFormat: '{"type":"json_object"}' });
      const u2 = universe(user, { id: 'aa000000-0000-4000-8000-000000000002', updatedAt: at(1), additionalInstructions: 'x' });
      const u3 = universe(user, { id: 'bb000000-0000-4000-8000-000000000003', displayName: 'world', updatedAt: at(5) });
      for (const u of [u1, u2, u3]) await s.universes.insert(u);
      await s.universes.insert(universe(randomUUID(), { id: 'aa000000-0000-4000-8000-000000000009', displayName: 'world' }));
      expect(await s.universes.get(u1.id)).toStrictEqual(u1);
      expect(await s.universes.get(hexId())).toBeUndefined();
      const ids = (rows: UniverseRow[]) => rows.map((r) => r.id);
      expect(ids(await s.universes.list(user, 10))).toEqual([u3.id, u2.id, u1.id]);
      expect(ids(await s.universes.list(user, 1))).toEqual([u3.id]);
      expect(ids(await s.universes.matching(user, 'world', null, 10))).toEqual([u3.id, u1.id]);
      expect(ids(await s.universes.matching(user, 'x', 'aa', 10))).toEqual([u2.id, u1.id]);
      expect(ids(await s.universes.matching(user, 'world', 'aa', 2))).toEqual([u3.id, u2.id]);
    });

    it('writes under its lease: append, truncate then append, touch, release', async () => {
      const u = universe(randomUUID());
      await s.universes.insert(u);
      const subject = universeSubject(u.id);
      expect(await s.leases.acquire(lease(subject, 'w', 10_000), 0)).toBeNull();
      const claim = { subject, owner: 'w' };
      const first = [umsg(1), umsg(2, { role: 'assistant', content: null, toolCalls: '[{"id":"t1"}]' }),
        umsg(3, { role: 'tool', toolCallId: 't1', toolName: 'roll', toolOk: 1 })];
      expect(await s.universes.write({ universeId: u.id, lease: claim, append: first, touch: { messages: 3, updatedAt: at(3) }, release: false })).toBe(true);
      expect(await s.universes.messages(u.id)).toStrictEqual(first);
      expect(await s.universes.get(u.id)).toStrictEqual({ ...u, messages: 3, updatedAt: at(3) });
      // Still held (release: false).
      expect(await s.leases.acquire(lease(subject, 'other', 10_000), 0)).toMatchObject({ owner: 'w' });

      const branch = [umsg(2, { content: 'again' })];
      expect(await s.universes.write({ universeId: u.id, lease: claim, truncateTo: 1, append: branch, touch: { messages: 2, updatedAt: at(4) }, release: true })).toBe(true);
      expect(await s.universes.messages(u.id)).toStrictEqual([first[0], branch[0]]);
      expect((await s.universes.get(u.id))?.messages).toBe(2);
      // Released with the last write.
      expect(await s.leases.acquire(lease(subject, 'other', 10_000), 0)).toBeNull();
      // Not ours any more: false, nothing written.
      expect(await s.universes.write({ universeId: u.id, lease: claim, truncateTo: 0, append: [umsg(1)], touch: { messages: 1, updatedAt: at(9) }, release: true })).toBe(false);
      expect(await s.universes.messages(u.id)).toStrictEqual([first[0], branch[0]]);
      expect(await s.universes.get(u.id)).toStrictEqual({ ...u, messages: 2, updatedAt: at(4) });
      expect(await s.leases.acquire(lease(subject, 'third', 10_000), 0)).toMatchObject({ owner: 'other' });
    });

    it('searches a user\'s universe messages; a truncation (a statePointer) takes the dropped ones out of the index', async () => {
      const user = randomUUID();
      const u = universe(user, { displayName: 'lair' });
      await s.universes.insert(u);
      await s.universes.insert(universe(randomUUID()));
      const subject = universeSubject(u.id);
      expect(await s.leases.acquire(lease(subject, 'w', 10_000), 0)).toBeNull();
      const claim = { subject, owner: 'w' };
      const said = [umsg(1, { content: 'a dragon sleeps' }), umsg(2, { role: 'assistant', content: 'the dragon wakes' }), umsg(3, { role: 'tool', content: null })];
      await s.universes.write({ universeId: u.id, lease: claim, append: said, touch: { messages: 3, updatedAt: at(3) }, release: false });
      const find = (q: string, over: Partial<Parameters<Store['universes']['search']>[0]> = {}) =>
        s.universes.search({ userId: user, terms: parseSearch(q), limit: 10, ...over }).then((hits) => hits.map((h) => [h.universeName, h.seq, h.role]).sort());
      expect(await find('dragon')).toEqual([['lair', 1, 'user'], ['lair', 2, 'assistant']]);
      expect(await find('dragon', { role: 'assistant' })).toEqual([['lair', 2, 'assistant']]);
      expect(await find('dragon', { userId: randomUUID() })).toEqual([]);
      await s.universes.write({ universeId: u.id, lease: claim, truncateTo: 1, append: [umsg(2, { content: 'a kite' })], touch: { messages: 2, updatedAt: at(4) }, release: true });
      expect(await find('dragon')).toEqual([['lair', 1, 'user']]);
      expect(await find('kite')).toEqual([['lair', 2, 'user']]);
    });

    it('searches the owner\'s logs by what was asked and answered', async () => {
      const owner = randomUUID();
      const row = (id: string, userInput: string, assistantRaw: string, createdAt: string): LogRow => ({
        id, kind: 'text', ownerUserId: owner, userId: owner, gameId: null, universeId: null, requestId: null, model: 'm', providerModel: null,
        status: 'ok', error: null, inputTokens: 1, outputTokens: 1, costUsd: 0, totalMs: 1, providerMs: 1, createdAt,
        requestSummary: JSON.stringify({ userInput }), responseSummary: JSON.stringify({ assistantRaw }),
      });
      await s.logs.insert(row(hexId(), 'where is the dragon', 'in its lair', at(1)));
      const second = hexId();
      await s.logs.insert(row(second, 'and the kite?', 'a dragon kite, flying', at(2)));
      const hits = await s.logs.search({ ownerUserId: owner, terms: parseSearch('dragon'), limit: 10 });
      expect(hits).toHaveLength(2);
      expect(await s.logs.search({ ownerUserId: owner, terms: parseSearch('kite'), limit: 10 })).toEqual([{ id: second, universeId: null, model: 'm', createdAt: at(2), text: 'and the kite? a dragon kite, flying' }]);
      expect(await s.logs.search({ ownerUserId: randomUUID(), terms: parseSearch('dragon'), limit: 10 })).toEqual([]);
      expect(await s.logs.search({ ownerUserId: owner, terms: parseSearch('dragon'), since: at(2), limit: 10 })).toHaveLength(1);
    });

    it('saves and updates request records', async () => {
      const user = randomUUID();
      expect(await s.universes.request(user, 'r1')).toBeUndefined();
      await s.universes.saveRequest({ userId: user, requestId: 'r1', universeId: null, status: 'pending', userSeq: null, response: null }, at(1));
      expect(await s.universes.request(user, 'r1')).toStrictEqual({ userId: user, requestId: 'r1', universeId: null, status: 'pending', userSeq: null, response: null });
      const done = { userId: user, requestId: 'r1', universeId: hexId(), status: 'done' as const, userSeq: 3, response: '{"ok":true}' };
      await s.universes.saveRequest(done, at(2));
      expect(await s.universes.request(user, 'r1')).toStrictEqual(done);
      expect(await s.universes.request(randomUUID(), 'r1')).toBeUndefined();
    });
  });

  describe('leases', () => {
    it('acquires, refuses another owner with the holder row, refreshes, releases, and yields when expired', async () => {
      const subject = entitySubject(hexId());
      const mine = lease(subject, 'me', 1000, { idempotencyKey: 'k', contentSha256: 'sha' });
      expect(await s.leases.acquire(mine, 0)).toBeNull();
      expect(await s.leases.acquire(lease(subject, 'you', 5000), 999)).toStrictEqual(mine);
      // The same owner takes it again (a retry of its own turn).
      expect(await s.leases.acquire({ ...mine, expiresAt: 2000 }, 999)).toBeNull();
      expect(await s.leases.refresh(subject, 'me', 3000)).toBe(true);
      expect(await s.leases.refresh(subject, 'you', 9000)).toBe(false);
      expect(await s.leases.acquire(lease(subject, 'you', 5000), 2999)).toStrictEqual({ ...mine, expiresAt: 3000 });
      // Expired: another owner takes it, and ours can no longer be refreshed.
      const yours = lease(subject, 'you', 9000);
      expect(await s.leases.acquire(yours, 3000)).toBeNull();
      expect(await s.leases.refresh(subject, 'me', 9999)).toBe(false);
      // Releasing someone else's lease does nothing.
      await s.leases.release(subject, 'me');
      expect(await s.leases.acquire(lease(subject, 'me', 9999), 3001)).toStrictEqual(yours);
      await s.leases.release(subject, 'you');
      expect(await s.leases.acquire(lease(subject, 'me', 9999), 3001)).toBeNull();
    });

    it('lets exactly one of two replicas win a subject they race for', async () => {
      for (let round = 0; round < 20; round++) {
        const subject = entitySubject(hexId());
        const [r1, r2] = await Promise.all([
          s.leases.acquire(lease(subject, 'replica-1', 10_000), 0),
          s2.leases.acquire(lease(subject, 'replica-2', 10_000), 0),
        ]);
        expect([r1, r2].filter((r) => r === null)).toHaveLength(1);
        const loser = r1 ?? r2;
        expect(loser?.owner).toBe(r1 === null ? 'replica-1' : 'replica-2');
      }
    });
  });

  describe('keys', () => {
    it('inserts, finds by public id and prefix, lists, and revokes once, for every replica', async () => {
      const a = await account();
      const key = {
        id: `k${hexId().slice(0, 8)}`, accountId: a.id, publicId: `pub-${hexId()}`, secretSha256: 'sec',
        scopes: 'entities,universes', createdAt: at(1), revokedAt: null, rpm: null, tpm: null, expiresAt: null,
      };
      await s.keys.insert(key);
      expect(await s.keys.byPublicId(key.publicId)).toStrictEqual(key);
      expect(await s.keys.byPublicId('nope')).toBeUndefined();
      expect(await s.keys.idsWithPrefix(key.id.slice(0, 6), 10)).toContain(key.id);
      expect(await s.keys.idsWithPrefix(`${key.id}x`, 10)).toEqual([]);
      expect(await s.keys.list()).toContainEqual(key);
      expect(await s.keys.revoke(key.id, at(2))).toBe(true);
      expect(await s.keys.revoke(key.id, at(3))).toBe(false);
      expect(await s2.keys.byPublicId(key.publicId)).toStrictEqual({ ...key, revokedAt: at(2) });
      expect(await s.keys.revoke('missing', at(3))).toBe(false);
    });

    it('keeps an expiring key\'s end, and moves it only while the key expires and is not revoked, for every replica', async () => {
      const a = await account();
      const base = { accountId: a.id, secretSha256: 'sec', scopes: 'entities', createdAt: at(1), revokedAt: null, rpm: null, tpm: null };
      const expiring = { ...base, id: `k${hexId().slice(0, 8)}`, publicId: `pub-${hexId()}`, expiresAt: at(5) };
      const forever = { ...base, id: `k${hexId().slice(0, 8)}`, publicId: `pub-${hexId()}`, expiresAt: null };
      await s.keys.insert(expiring);
      await s.keys.insert(forever);
      expect(await s2.keys.byPublicId(expiring.publicId)).toStrictEqual(expiring);
      expect(await s.keys.renew(expiring.id, at(9))).toBe(true);
      expect(await s2.keys.byPublicId(expiring.publicId)).toMatchObject({ expiresAt: at(9) });
      // A key that never expires is not given an end, and a revoked one is not renewed.
      expect(await s.keys.renew(forever.id, at(9))).toBe(false);
      expect(await s2.keys.byPublicId(forever.publicId)).toMatchObject({ expiresAt: null });
      expect(await s.keys.revoke(expiring.id, at(10))).toBe(true);
      expect(await s.keys.renew(expiring.id, at(20))).toBe(false);
      expect(await s2.keys.byPublicId(expiring.publicId)).toMatchObject({ expiresAt: at(9), revokedAt: at(10) });
      expect(await s.keys.renew('missing', at(20))).toBe(false);
    });

    it('externalVersion, where a store offers it, changes when another replica revokes a key (caches rely on it)', async () => {
      if (!s.externalVersion) return; // PostgreSQL keeps no such cache
      const a = await account();
      const key = {
        id: `k${hexId().slice(0, 8)}`, accountId: a.id, publicId: `pub-${hexId()}`, secretSha256: 'sec',
        scopes: 'entities', createdAt: at(1), revokedAt: null, rpm: null, tpm: null, expiresAt: null,
      };
      await s.keys.insert(key);
      const before = s.externalVersion();
      expect(s.externalVersion()).toBe(before); // stable while no one else writes
      expect(await s2.keys.revoke(key.id, at(2))).toBe(true);
      expect(s.externalVersion()).not.toBe(before);
    });
  });

  describe('rate limits', () => {
    async function key(): Promise<KeyRow> {
      const a = await account();
      const row: KeyRow = {
        id: `k${hexId().slice(0, 8)}`, accountId: a.id, publicId: `pub-${hexId()}`, secretSha256: 'sec',
        scopes: 'entities', createdAt: at(1), revokedAt: null, rpm: null, tpm: null, expiresAt: null,
      };
      await s.keys.insert(row);
      return row;
    }
    const RPM5 = { requestMs: 12_000, tokens: false, periodMs: 60_000 };

    it('sets a key\'s and an account\'s limits, clears one with null, and leaves an absent one as it was', async () => {
      const k = await key();
      expect(await s.keys.setLimits(k.id, { rpm: 5, tpm: 1000 })).toBe(true);
      expect(await s2.keys.byPublicId(k.publicId)).toMatchObject({ rpm: 5, tpm: 1000 });
      expect(await s.keys.setLimits(k.id, { rpm: null })).toBe(true);
      expect(await s2.keys.byPublicId(k.publicId)).toMatchObject({ rpm: null, tpm: 1000 });
      expect(await s.keys.setLimits('missing', { rpm: 1 })).toBe(false);
      expect(await s.accounts.setLimits(k.accountId, { tpm: 50 })).toBe(true);
      expect(await s2.accounts.get(k.accountId)).toMatchObject({ rpm: null, tpm: 50 });
      expect(await s.accounts.setLimits('missing', { tpm: 1 })).toBe(false);
    });

    it('admits exactly a minute\'s requests between two replicas, then refuses without counting the refusal', async () => {
      const k = await key();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? s : s2).rates.admit(k.id, RPM5)));
      expect(results.filter((r) => r.admitted)).toHaveLength(5);
      // Admissions in the order they took the row see time go forward: each leaves one request fewer.
      const left = results.filter((r) => r.admitted).map((r) => Math.floor((60_000 - (r.requestTat - r.now)) / 12_000 + 1e-6));
      expect(left.sort()).toEqual([0, 1, 2, 3, 4]);
      const refused = results.find((r) => !r.admitted)!;
      // The refusing state is the full bucket: five requests' time ahead of now, on the database's clock.
      expect(refused.requestTat - refused.now).toBeGreaterThan(59_000);
      expect(refused.requestTat - refused.now).toBeLessThanOrEqual(60_000.001);
      const again = await s.rates.admit(k.id, RPM5);
      expect(again).toMatchObject({ admitted: false, requestTat: refused.requestTat });
      // A request that costs nothing is not refused by requests.
      expect((await s.rates.admit(k.id, { ...RPM5, requestMs: 0 })).admitted).toBe(true);
    });

    it('refuses once the tokens spent fill the minute, and a spend never fails', async () => {
      const k = await key();
      const gate = { requestMs: 0, tokens: true, periodMs: 60_000 };
      expect((await s.rates.admit(k.id, gate)).admitted).toBe(true);
      await s2.rates.spend(k.id, 30_000); // half the minute's tokens
      expect((await s.rates.admit(k.id, gate)).admitted).toBe(true);
      await s.rates.spend(k.id, 45_000); // past the whole minute: the turn ran, so it counts
      const refused = await s2.rates.admit(k.id, gate);
      expect(refused.admitted).toBe(false);
      expect(refused.tokenTat - refused.now).toBeGreaterThan(60_000);
      await s.rates.spend('never-admitted', 1000); // no row: nothing to count
    });

    it('reserves between two replicas while some of the minute is left, each seeing the others (issue 31), and a negative spend returns a reservation', async () => {
      const k = await key();
      expect((await s.rates.admit(k.id, { requestMs: 0, tokens: true, periodMs: 60_000 })).admitted).toBe(true);
      // Ten concurrent reservations of a fifth of the minute each: five fill it, the sixth finds a sliver left, the rest are refused.
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? s : s2).rates.reserve(k.id, 12_000, 60_000)));
      const admitted = results.filter((r) => r.admitted);
      expect(admitted.length).toBeGreaterThanOrEqual(5);
      expect(admitted.length).toBeLessThanOrEqual(6);
      const refused = results.find((r) => !r.admitted)!;
      // Refused and unchanged: the state that refused it, at least a minute ahead.
      expect(refused.tokenTat - refused.now).toBeGreaterThanOrEqual(60_000);
      // The state that refused it is one an admission left (time moves on between them: a sliver may be admitted after a refusal).
      expect(admitted.map((r) => r.tokenTat)).toContain(refused.tokenTat);
      // Together the reservations overspend the minute by one at most.
      const last = Math.max(...admitted.map((r) => r.tokenTat));
      expect(last - refused.now).toBeLessThan(60_000 + 12_000 + 1_000);
      // A reservation returned (a negative spend) makes room again, never past now.
      await s.rates.spend(k.id, -36_000);
      const after = await s2.rates.reserve(k.id, 1, 60_000);
      expect(after.admitted).toBe(true);
      await s.rates.spend(k.id, -10_000_000);
      const whole = await s.rates.reserve(k.id, 0, 60_000);
      expect(whole.tokenTat).toBeGreaterThanOrEqual(whole.now - 5);
      expect(whole.tokenTat).toBeLessThanOrEqual(whole.now + 5);
    });
  });

  describe('logs', () => {
    function log(owner: string, over: Partial<LogRow> = {}): LogRow {
      return {
        id: hexId(), kind: 'text', ownerUserId: owner, userId: 'u1', gameId: null, universeId: null, requestId: null,
        model: 'echo', providerModel: null, status: 'ok', error: null, inputTokens: 1, outputTokens: 2, costUsd: 0.5,
        totalMs: 30, providerMs: 20, createdAt: T0, requestSummary: '{}', responseSummary: '{}', ...over,
      } as LogRow;
    }

    it('lists newest first with filters and a total; gets by id and prefix within the owner', async () => {
      const owner = randomUUID();
      const l1 = log(owner, { createdAt: at(1), gameId: 'g1' });
      const l2 = log(owner, { createdAt: at(2), kind: 'image', userId: 'u2', requestId: 'r9' });
      const l3 = log(owner, { createdAt: at(2), gameId: 'g1', universeId: hexId(), providerModel: 'pm', error: 'boom', status: 'error' });
      for (const l of [l1, l2, l3]) await s.logs.insert(l);
      await s.logs.insert(log(randomUUID(), { createdAt: at(3) }));
      const ids = (r: { rows: LogRow[] }) => r.rows.map((x) => x.id);
      const all = await s.logs.list({ ownerUserId: owner }, 10, 0);
      expect(all.total).toBe(3);
      expect(ids(all)).toEqual([l3.id, l2.id, l1.id]);
      expect(all.rows[0]).toStrictEqual(l3);
      const page = await s.logs.list({ ownerUserId: owner }, 1, 1);
      expect([ids(page), page.total]).toEqual([[l2.id], 3]);
      expect(ids(await s.logs.list({ ownerUserId: owner, kind: 'image' }, 10, 0))).toEqual([l2.id]);
      expect(await s.logs.list({ ownerUserId: owner, gameId: 'g1' }, 1, 0)).toMatchObject({ total: 2, rows: [{ id: l3.id }] });
      expect(ids(await s.logs.list({ ownerUserId: owner, userId: 'u2' }, 10, 0))).toEqual([l2.id]);
      expect(ids(await s.logs.list({ ownerUserId: owner, requestId: 'r9', kind: 'text' }, 10, 0))).toEqual([]);
      expect(await s.logs.get(owner, l1.id)).toStrictEqual(l1);
      expect(await s.logs.get(randomUUID(), l1.id)).toBeUndefined();
      expect(await s.logs.idsWithPrefix(owner, l1.id.slice(0, 8), 10)).toEqual([l1.id]);
      expect(await s.logs.idsWithPrefix(randomUUID(), l1.id.slice(0, 8), 10)).toEqual([]);
    });

    it('charges with a log record together, or neither when one fails', async () => {
      const metered = await account(1);
      const owner = randomUUID();
      const c = { accountId: metered.id, entityId: null, keyId: null, model: 'echo', inputTokens: 3, outputTokens: 4, costUsd: 0.25, createdAt: at(1) };
      const l = log(owner, { createdAt: at(1) });
      await s.accounts.chargeWithLog(c, l);
      expect(await s.accounts.ledger(metered.id)).toStrictEqual([c]);
      expect(await s.logs.get(owner, l.id)).toStrictEqual(l);
      expect((await s.accounts.get(metered.id))?.balanceUsd).toBe(0.75);
      // The same log id again: the insert fails, so the second charge is rolled back with it.
      await expect(s.accounts.chargeWithLog({ ...c, createdAt: at(2) }, l)).rejects.toThrow();
      expect(await s.accounts.ledger(metered.id)).toStrictEqual([c]);
      expect((await s.accounts.get(metered.id))?.balanceUsd).toBe(0.75);
    });

    it('stores a stateless completion\'s key with its charge and log, and writes nothing when the key is taken', async () => {
      const a = await account(1);
      const other = await account(1);
      const owner = randomUUID();
      const c = { accountId: a.id, entityId: null, keyId: null, model: 'echo', inputTokens: 3, outputTokens: 4, costUsd: 0.25, createdAt: at(1) };
      const key = { key: 'retry-1', row: { contentSha256: 'abc', completion: '{"id":"c1"}' }, createdAt: at(1) };
      expect(await s.accounts.chargeWithLog(c, log(owner, { createdAt: at(1) }), key)).toBe(true);
      expect(await s2.idempotency.completion(a.id, 'retry-1')).toStrictEqual(key.row);
      // The same key again, from another replica: nothing written, no second charge.
      const again = log(owner, { createdAt: at(2) });
      expect(await s2.accounts.chargeWithLog({ ...c, createdAt: at(2) }, again, { ...key, row: { ...key.row, completion: '{"id":"c2"}' } })).toBe(false);
      expect(await s.accounts.ledger(a.id)).toStrictEqual([c]);
      expect(await s.logs.get(owner, again.id)).toBeUndefined();
      expect(await s.idempotency.completion(a.id, 'retry-1')).toStrictEqual(key.row);
      // Keys are per account.
      expect(await s.idempotency.completion(other.id, 'retry-1')).toBeUndefined();
      expect(await s.accounts.chargeWithLog({ ...c, accountId: other.id }, log(owner, { createdAt: at(3) }), key)).toBe(true);
    });
  });

  describe('calibration', () => {
    it('saves and replaces a route calibration', async () => {
      const key = `route-${hexId()}`;
      expect(await s.calibration.get(key)).toBeUndefined();
      const row = { routeKey: key, factor: 1.25, samples: 3, contextTokens: null, contextSource: null, updatedAt: at(1) };
      await s.calibration.save(row);
      expect(await s.calibration.get(key)).toStrictEqual(row);
      const next = { ...row, factor: 0.875, samples: 4, contextTokens: 8192, contextSource: 'server' as const, updatedAt: at(2) };
      await s.calibration.save(next);
      expect(await s2.calibration.get(key)).toStrictEqual(next);
    });

    it('lists routes and forgets one of them', async () => {
      const base = `reset-${hexId()}`;
      const row = (k: string) => ({ routeKey: k, factor: 1, samples: 1, contextTokens: 512, contextSource: 'estimate' as const, updatedAt: at(1) });
      for (const k of [`${base}#a`, `${base}#ab`]) await s.calibration.save(row(k));
      expect((await s.calibration.list()).filter((r) => r.routeKey.startsWith(base)).map((r) => r.routeKey)).toEqual([`${base}#a`, `${base}#ab`]);
      expect(await s.calibration.delete(`${base}#a`)).toBe(1);
      expect(await s2.calibration.get(`${base}#a`)).toBeUndefined();
      expect(await s2.calibration.get(`${base}#ab`)).toStrictEqual(row(`${base}#ab`));
    });
  });

  describe('accounts', () => {
    it('has the local account; inserts, finds, lists, tops up and charges', async () => {
      expect(await s.accounts.get('local')).toMatchObject({ id: 'local', name: 'local', balanceUsd: null, userId: '00000000-0000-4000-8000-000000000001' });
      const unmetered = await account();
      const metered = await account(2);
      expect(await s.accounts.get(unmetered.id)).toStrictEqual(unmetered);
      expect(await s.accounts.byName(metered.name)).toStrictEqual(metered);
      expect(await s.accounts.byName('nobody')).toBeUndefined();
      const list = await s.accounts.list();
      expect(list).toContainEqual(metered);
      // Oldest first, ties by id (byte order).
      const key = (r: AccountRow) => `${r.createdAt}\u0000${r.id}`;
      expect(list.map(key)).toEqual(list.map(key).sort());

      // Charging an unmetered account records the charge; its balance stays unmetered.
      const c1 = { accountId: unmetered.id, entityId: null, keyId: null, model: 'echo', inputTokens: 1, outputTokens: 2, costUsd: 0.1, createdAt: at(1) };
      await s.accounts.charge(c1);
      expect((await s.accounts.get(unmetered.id))?.balanceUsd).toBeNull();
      // A top-up meters it from zero.
      await s.accounts.topup(unmetered.id, 0.3);
      expect((await s.accounts.get(unmetered.id))?.balanceUsd).toBe(0.3);

      const c2 = { ...c1, accountId: metered.id, entityId: hexId(), costUsd: 0.1, createdAt: at(2) };
      // A charge a served request made names its API key; one without (the local backend's own) has none.
      const c3 = { ...c2, keyId: 'key-1', costUsd: 0.2, createdAt: at(3) };
      await s.accounts.charge(c2);
      await s.accounts.charge(c3);
      await s.accounts.topup(metered.id, 0.1);
      expect((await s.accounts.get(metered.id))?.balanceUsd).toBe(1.8);
      expect(await s.accounts.ledger(metered.id)).toStrictEqual([c2, c3]);
      expect(await s.accounts.ledger(unmetered.id)).toStrictEqual([c1]);
      expect(await s.accounts.ledgerSums({ accountId: metered.id, by: 'key' })).toStrictEqual([
        { group: 'key-1', charges: 1, inputTokens: 1, outputTokens: 2, costUsd: 0.2 },
        { group: null, charges: 1, inputTokens: 1, outputTokens: 2, costUsd: 0.1 },
      ]);
    });
  });

  describe('the database', () => {
    it('answers ping, integrity check and checkpoint', async () => {
      await expect(s.ping()).resolves.toBeUndefined();
      expect(await s.integrityCheck()).toBe('ok');
      await expect(s.checkpoint()).resolves.toBeUndefined();
    });

    it('migrates a blank database once when two replicas open it at the same moment', async () => {
      const target = await factory.blank();
      const [a, b] = await Promise.all([factory.open(target), factory.open(target)]);
      try {
        // The seed account is a migration's insert: run twice, it would be there twice (or fail).
        expect((await a.accounts.list()).map((r) => r.id)).toEqual(['local']);
        expect(await b.integrityCheck()).toBe('ok');
        const c = await factory.open(target);
        expect((await c.accounts.list()).map((r) => r.id)).toEqual(['local']);
        await c.close();
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
});
