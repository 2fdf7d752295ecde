import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { BlockRow, EntityRow, EntityTurnWrite, LeaseSubject, UniverseRow } from '../../src/store/types.js';
import { tempDir } from '../helpers/temp.js';

const NOW = '2026-01-01T00:00:00.000Z';

function entity(id: string): EntityRow {
  return {
    id, accountId: 'local', name: id, instructions: '', instructionsTokens: 0, model: 'echo', state: 'active',
    budgetTokens: 1000, capTokens: 100_000, transcriptMessages: 0, transcriptTokens: 0, windowTokens: 0, windowBlocks: 0,
    createdAt: NOW, updatedAt: NOW,
  };
}

function block(id: string, position: number, role: 'user' | 'assistant', seq: number): BlockRow {
  return { id, position, kind: 'message', role, content: `${role} ${seq}`, tokens: 2, coversFrom: seq, coversTo: seq };
}

function turn(entityId: string, owner: string, key?: string): EntityTurnWrite {
  return {
    entityId,
    lease: { subject: `entity:${entityId}`, owner },
    messages: [
      { seq: 1, role: 'user', content: 'hi', tokens: 1, createdAt: NOW },
      { seq: 2, role: 'assistant', content: 'hello', tokens: 1, createdAt: NOW },
    ],
    deleteBlockIds: [],
    insertBlocks: [block(`${entityId}-b1`, 1, 'user', 1), block(`${entityId}-b2`, 2, 'assistant', 2)],
    counters: { transcriptMessages: 2, transcriptTokens: 2, windowTokens: 4, windowBlocks: 2, updatedAt: NOW },
    charge: { accountId: 'local', entityId, model: 'echo', inputTokens: 1, outputTokens: 1, costUsd: 0, createdAt: NOW },
    idempotency: key === undefined ? undefined : { key, row: { contentSha256: 'x', completion: '{}' }, createdAt: NOW },
  };
}

async function lease(store: SqliteStore, subject: LeaseSubject, owner: string, expiresAt = Date.now() + 60_000) {
  return store.leases.acquire({ subject, owner, idempotencyKey: null, contentSha256: null, expiresAt }, Date.now());
}

/** Every row an entity has, to compare before and after a refused write. */
function rows(store: SqliteStore, entityId: string) {
  const all = (sql: string) => store.db.prepare(sql).all(entityId);
  return {
    entity: all(`SELECT * FROM entities WHERE id = ?`),
    messages: all(`SELECT * FROM messages WHERE entity_id = ?`),
    blocks: all(`SELECT * FROM blocks WHERE entity_id = ?`),
    ledger: all(`SELECT * FROM ledger WHERE entity_id = ?`),
    keys: all(`SELECT * FROM idempotency_keys WHERE entity_id = ?`),
  };
}

describe('SqliteStore units of work', () => {
  const dir = tempDir();
  let n = 0;
  let store: SqliteStore;
  const open = () => (store = SqliteStore.open(join(dir, `units-${n++}.db`)));
  afterEach(() => store?.close());

  it('commits a turn whole under its lease and frees the lease', async () => {
    open();
    await store.entities.insert(entity('e1'));
    expect(await lease(store, 'entity:e1', 'me')).toBeNull();
    expect(await store.entities.commitTurn(turn('e1', 'me', 'k1'))).toBe(true);
    const r = rows(store, 'e1');
    expect(r.messages).toHaveLength(2);
    expect(r.blocks).toHaveLength(2);
    expect(r.ledger).toHaveLength(1);
    expect(r.keys).toHaveLength(1);
    expect(await store.entities.get('local', 'e1')).toMatchObject({ transcriptMessages: 2, windowBlocks: 2 });
    expect(store.db.prepare(`SELECT count(*) AS n FROM turn_leases`).get()).toEqual({ n: 0 });
  });

  it('writes nothing for a turn whose lease another owner took over', async () => {
    open();
    await store.entities.insert(entity('e2'));
    // Ours expired, and another writer took it: the first turn must not store over the second's.
    expect(await lease(store, 'entity:e2', 'me', Date.now() - 1)).toBeNull();
    expect(await lease(store, 'entity:e2', 'other')).toBeNull();
    const before = rows(store, 'e2');
    expect(await store.entities.commitTurn(turn('e2', 'me', 'k2'))).toBe(false);
    expect(rows(store, 'e2')).toEqual(before);
    // The other owner's lease is untouched.
    expect(store.db.prepare(`SELECT owner FROM turn_leases WHERE subject = 'entity:e2'`).get()).toEqual({ owner: 'other' });
  });

  it('commits under an expired lease that no one took', async () => {
    open();
    await store.entities.insert(entity('e3'));
    expect(await lease(store, 'entity:e3', 'me', Date.now() - 1)).toBeNull();
    expect(await store.entities.commitTurn(turn('e3', 'me'))).toBe(true);
    expect(rows(store, 'e3').messages).toHaveLength(2);
  });

  it('rolls a failing turn back whole', async () => {
    open();
    await store.entities.insert(entity('e4'));
    expect(await lease(store, 'entity:e4', 'me')).toBeNull();
    const before = rows(store, 'e4');
    const bad = turn('e4', 'me');
    // The same block id twice: the second insert fails after the messages went in.
    bad.insertBlocks = [bad.insertBlocks[0], bad.insertBlocks[0]];
    await expect(store.entities.commitTurn(bad)).rejects.toThrow();
    expect(rows(store, 'e4')).toEqual(before);
    expect(store.db.prepare(`SELECT owner FROM turn_leases WHERE subject = 'entity:e4'`).get()).toEqual({ owner: 'me' });
  });

  it('refuses a universe write whose lease was taken over', async () => {
    open();
    const u: UniverseRow = {
      id: 'u1', userId: 'user', displayName: null, storedPrompt: 'p', promptText: 'text', responseFormat: null,
      additionalInstructions: null, promptFingerprint: 'f', messages: 0, createdAt: NOW, updatedAt: NOW,
    };
    await store.universes.insert(u);
    expect(await lease(store, 'universe:u1', 'me', Date.now() - 1)).toBeNull();
    expect(await lease(store, 'universe:u1', 'other')).toBeNull();
    const write = {
      universeId: 'u1',
      lease: { subject: 'universe:u1' as const, owner: 'me' },
      append: [{ seq: 1, role: 'user' as const, content: 'hi', toolCalls: null, toolCallId: null, toolName: null, toolOk: null, createdAt: NOW }],
      touch: { messages: 1, updatedAt: NOW },
      release: true,
    };
    expect(await store.universes.write(write)).toBe(false);
    expect(await store.universes.messages('u1')).toEqual([]);
    expect(await lease(store, 'universe:u1', 'me')).toMatchObject({ owner: 'other' });
    // Once ours again, the same write lands and frees the lease.
    await store.leases.release('universe:u1', 'other');
    expect(await lease(store, 'universe:u1', 'me')).toBeNull();
    expect(await store.universes.write(write)).toBe(true);
    expect(await store.universes.messages('u1')).toHaveLength(1);
    expect(await store.universes.get('u1')).toMatchObject({ messages: 1 });
    expect(store.db.prepare(`SELECT count(*) AS n FROM turn_leases`).get()).toEqual({ n: 0 });
  });

  it('imports with kept ids only when every id is free, else names the first taken', async () => {
    open();
    await store.entities.insert(entity('e5'));
    expect(await lease(store, 'entity:e5', 'me')).toBeNull();
    expect(await store.entities.commitTurn(turn('e5', 'me'))).toBe(true);
    const imported = { entity: entity('e6'), messages: [], blocks: [block('e5-b2', 1, 'user', 1)], keepIds: true };
    expect(await store.entities.importEntity({ ...imported, entity: entity('e5') })).toEqual({ taken: 'entity', id: 'e5' });
    expect(await store.entities.importEntity(imported)).toEqual({ taken: 'block', id: 'e5-b2' });
    expect(await store.entities.get('local', 'e6')).toBeUndefined();
    expect(await store.entities.importEntity({ ...imported, blocks: [block('e6-b1', 1, 'user', 1)] })).toBeNull();
    expect(await store.entities.window('e6')).toHaveLength(1);
  });

  it('updates a head and returns the row, or undefined when the entity is gone', async () => {
    open();
    await store.entities.insert(entity('e7'));
    expect(await store.entities.updateHead('local', 'e7', { name: 'renamed', updatedAt: NOW })).toMatchObject({ name: 'renamed' });
    expect(await store.entities.updateHead('local', 'nope', { name: 'x', updatedAt: NOW })).toBeUndefined();
    expect(await store.entities.snapshot('local', 'e7')).toMatchObject({ entity: { id: 'e7' }, window: [] });
    expect(await store.entities.snapshot('local', 'nope')).toBeUndefined();
    await store.ping();
    expect(await store.integrityCheck()).toBe('ok');
  });
});

/** A turn that creates entity `id` with a history of `n` messages (each a block), then adds its own two. */
function creatingTurn(id: string, owner: string, n: number): EntityTurnWrite {
  const history = Array.from({ length: n }, (_, i) => ({
    seq: i + 1, role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `message ${i} of ${id}`, tokens: 2, createdAt: NOW,
  }));
  const own = turn(id, owner);
  return {
    ...own,
    create: { entity: { ...entity(id), transcriptMessages: n }, messages: history, blocks: history.map((m) => block(`${id}-h${m.seq}`, m.seq, m.role, m.seq)), keepIds: true },
    messages: own.messages.map((m, i) => ({ ...m, seq: n + 1 + i })),
    insertBlocks: own.insertBlocks.map((b, i) => ({ ...b, id: `${id}-t${i}`, position: n + 1 + i, coversFrom: n + 1 + i, coversTo: n + 1 + i })),
    counters: { ...own.counters, transcriptMessages: n + 2, windowBlocks: n + 2 },
  };
}

/** What a reader sees of entity `id` now (in one read transaction): its row and how many messages and blocks it has. */
function seen(store: SqliteStore, id: string) {
  const count = (table: string) => (store.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE entity_id = ?`).get(id) as { n: number }).n;
  return store.repos.snapshot(() => ({
    entity: store.db.prepare(`SELECT 1 FROM entities WHERE id = ?`).get(id) !== undefined, messages: count('messages'), blocks: count('blocks'),
  }));
}

/** Runs `write`, reading entity `id` at every turn of the event loop until it settles: the turns and what each saw. */
async function watch<T>(store: SqliteStore, id: string, write: Promise<T>) {
  let settled = false;
  const done = write.finally(() => (settled = true));
  const reads: Array<ReturnType<typeof seen>> = [];
  while (!settled) {
    await new Promise((r) => setImmediate(r));
    reads.push(seen(store, id));
  }
  return { result: await done, reads };
}

describe('SqliteStore large creates', () => {
  const dir = tempDir();
  let n = 0;
  let store: SqliteStore;
  const open = () => (store = SqliteStore.open(join(dir, `large-${n++}.db`)));
  afterEach(() => store?.close());
  const N = 5_000;

  it('writes a branch of 5,000 messages while the event loop turns, and a reader sees all of it or nothing', async () => {
    open();
    expect(await lease(store, 'entity:big', 'me')).toBeNull();
    const { result, reads } = await watch(store, 'big', store.entities.commitTurn(creatingTurn('big', 'me', N)));
    expect(result).toBe(true);
    // Written in one piece on this thread (before), the loop did not turn until the write was done.
    expect(reads.length).toBeGreaterThan(1);
    const none = { entity: false, messages: 0, blocks: 0 };
    const whole = { entity: true, messages: N + 2, blocks: N + 2 };
    for (const r of reads) expect([none, whole]).toContainEqual(r);
    expect(seen(store, 'big')).toEqual(whole);
    expect(await store.entities.get('local', 'big')).toMatchObject({ transcriptMessages: N + 2 });
    expect(store.db.prepare(`SELECT count(*) AS n FROM turn_leases`).get()).toEqual({ n: 0 });
  });

  it("lets the server's own writes through while a large create is written", async () => {
    open();
    expect(await lease(store, 'entity:big', 'me')).toBeNull();
    const commit = store.entities.commitTurn(creatingTurn('big', 'me', N));
    // Taken during the create: it waits for it rather than failing on a busy database.
    expect(await lease(store, 'entity:other', 'me')).toBeNull();
    expect(await commit).toBe(true);
  });

  it('leaves nothing of a large create that fails midway, or whose lease was lost', async () => {
    open();
    expect(await lease(store, 'entity:bad', 'me')).toBeNull();
    const bad = creatingTurn('bad', 'me', N);
    // The last block repeats the first one's id: the insert fails after thousands of rows went in.
    const blocks = bad.create!.blocks;
    blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], id: blocks[0].id };
    const failed = await watch(store, 'bad', store.entities.commitTurn({ ...bad, create: { ...bad.create!, keepIds: false } }).catch((err: Error) => err));
    expect(failed.result).toBeInstanceOf(Error);
    expect((failed.result as Error & { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    for (const r of failed.reads) expect(r).toEqual({ entity: false, messages: 0, blocks: 0 });
    expect(seen(store, 'bad')).toEqual({ entity: false, messages: 0, blocks: 0 });
    // Not the lease's owner: nothing is written, and the caller is told (false).
    expect(await store.entities.commitTurn(creatingTurn('bad', 'someone else', N))).toBe(false);
    expect(seen(store, 'bad')).toEqual({ entity: false, messages: 0, blocks: 0 });
  });

  it('imports a large entity whole while the event loop turns', async () => {
    open();
    const { create } = creatingTurn('imp', 'me', N);
    const { result, reads } = await watch(store, 'imp', store.entities.importEntity(create!));
    expect(result).toBeNull();
    expect(reads.length).toBeGreaterThan(1);
    expect(seen(store, 'imp')).toEqual({ entity: true, messages: N, blocks: N });
  });
});
