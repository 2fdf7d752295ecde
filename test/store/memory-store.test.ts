import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitySubject } from '../../src/engine/support/lease.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { EntityRow, MemoryWrite, Store } from '../../src/store/types.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// The store contract for pinned memory (issue 33), on SQLite and PostgreSQL alike.

interface StoreFactory {
  name: string;
  blank(): Promise<string>;
  open(target: string): Promise<Store>;
}

const dir = tempDir();
let files = 0;
const factories: StoreFactory[] = [{ name: 'sqlite', blank: async () => join(dir, `${files++}.db`), open: async (path) => SqliteStore.open(path) }];
const cluster = await startPostgres('the pinned memory store contract on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  let n = 0;
  factories.push({ name: 'postgres', blank: async () => cluster.createDatabase(`memory_${n++}`), open: (url) => PostgresStore.open(url, { poolSize: 4 }) });
}

const T0 = '2026-01-01T00:00:00.000Z';
const LIMITS = { blocks: 3, tokens: 100 };

describe.each(factories)('memory store contract: $name', (factory) => {
  let s: Store;
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

  async function entity(): Promise<EntityRow> {
    const row: EntityRow = {
      id: randomUUID(), accountId: 'local', name: 'ent', instructions: '', instructionsTokens: 0, model: 'echo', state: 'none',
      budgetTokens: 4000, capTokens: 100000, transcriptMessages: 0, transcriptTokens: 0, windowTokens: 0, windowBlocks: 0, recall: 0,
      createdAt: T0, updatedAt: T0,
    };
    await s.entities.insert(row);
    return row;
  }
  const set = (entityId: string, label: string, text: string | null, over: Partial<MemoryWrite> = {}): MemoryWrite => ({
    entityId, label, text, tokens: text === null ? 0 : text.length, source: 'user', at: T0, limits: LIMITS, ...over,
  });

  it('sets, replaces and removes blocks, each change with its history row; a no-op writes nothing', async () => {
    const e = await entity();
    expect(await s.memory.write(set(e.id, 'b', 'two'))).toEqual({ kind: 'changed', after: { label: 'b', text: 'two', tokens: 3, updatedAt: T0 } });
    await s.memory.write(set(e.id, 'a', 'one', { source: 'model', at: '2026-01-02T00:00:00.000Z' }));
    expect((await s.memory.write(set(e.id, 'b', 'two'))).kind).toBe('same');
    expect(await s.memory.write(set(e.id, 'b', 'deux'))).toMatchObject({ kind: 'changed', before: { text: 'two' }, after: { text: 'deux' } });
    expect(await s.memory.list(e.id)).toEqual([
      { label: 'a', text: 'one', tokens: 3, updatedAt: '2026-01-02T00:00:00.000Z' },
      { label: 'b', text: 'deux', tokens: 4, updatedAt: T0 },
    ]);
    expect((await s.memory.write(set(e.id, 'zzz', null))).kind).toBe('same');
    expect((await s.memory.write(set(e.id, 'a', null))).kind).toBe('changed');
    expect(await s.memory.list(e.id)).toEqual([{ label: 'b', text: 'deux', tokens: 4, updatedAt: T0 }]);
    expect(await s2.memory.history(e.id)).toEqual([
      { label: 'b', before: null, after: 'two', source: 'user', createdAt: T0 },
      { label: 'a', before: null, after: 'one', source: 'model', createdAt: '2026-01-02T00:00:00.000Z' },
      { label: 'b', before: 'two', after: 'deux', source: 'user', createdAt: T0 },
      { label: 'a', before: 'one', after: null, source: 'user', createdAt: T0 },
    ]);
  });

  it('refuses a write past the blocks or tokens limit, writing nothing; a shrinking write passes', async () => {
    const e = await entity();
    for (const l of ['a', 'b', 'c']) await s.memory.write(set(e.id, l, 'x'.repeat(30)));
    expect(await s.memory.write(set(e.id, 'd', 'x'))).toEqual({ kind: 'over', blocks: 4, tokens: 91 });
    expect(await s.memory.write(set(e.id, 'a', 'x'.repeat(41)))).toEqual({ kind: 'over', blocks: 3, tokens: 101 });
    expect(await s.memory.list(e.id)).toHaveLength(3);
    expect(await s.memory.history(e.id)).toHaveLength(3);
    // Limits lowered later: what shrinks is let through.
    expect((await s.memory.write(set(e.id, 'a', 'x'.repeat(20), { limits: { blocks: 3, tokens: 50 } }))).kind).toBe('changed');
    expect((await s.memory.write(set(e.id, 'a', 'x'.repeat(21), { limits: { blocks: 3, tokens: 50 } }))).kind).toBe('over');
  });

  it('two replicas racing for the last block: exactly one wins', async () => {
    const e = await entity();
    await s.memory.write(set(e.id, 'a', 'x'));
    await s.memory.write(set(e.id, 'b', 'x'));
    const kinds = (await Promise.all([s.memory.write(set(e.id, 'c', 'x')), s2.memory.write(set(e.id, 'd', 'y'))])).map((r) => r.kind);
    expect(kinds.sort()).toEqual(['changed', 'over']);
    expect(await s.memory.list(e.id)).toHaveLength(3);
  });

  it('answers missing for an entity that is not there, and deleting an entity takes its memory', async () => {
    expect(await s.memory.write(set(randomUUID(), 'a', 'x'))).toEqual({ kind: 'missing' });
    const e = await entity();
    await s.memory.write(set(e.id, 'a', 'x'));
    expect(await s.entities.delete('local', e.id)).toBe(true);
    expect(await s.memory.list(e.id)).toEqual([]);
    expect(await s.memory.history(e.id)).toEqual([]);
  });

  it("commitTurn writes the model's memory with the turn; an import writes blocks and history as they are", async () => {
    const e = await entity();
    const owner = `o-${randomUUID()}`;
    await s.leases.acquire({ subject: entitySubject(e.id), owner, idempotencyKey: null, contentSha256: null, expiresAt: 10_000 }, 0);
    const ok = await s.entities.commitTurn({
      entityId: e.id, lease: { subject: entitySubject(e.id), owner }, deleteBlockIds: [], insertBlocks: [],
      messages: [{ seq: 1, role: 'user', content: 'hi', tokens: 1, createdAt: T0 }, { seq: 2, role: 'assistant', content: 'ok', tokens: 1, createdAt: T0 }],
      counters: { transcriptMessages: 2, transcriptTokens: 2, windowTokens: 0, windowBlocks: 0, updatedAt: T0 },
      charge: { accountId: 'local', entityId: e.id, model: 'echo', inputTokens: 1, outputTokens: 1, costUsd: 0, createdAt: T0 },
      memory: [set(e.id, 'name', 'Ada', { source: 'model' })],
    });
    expect(ok).toBe(true);
    expect(await s.memory.history(e.id)).toEqual([{ label: 'name', before: null, after: 'Ada', source: 'model', createdAt: T0 }]);
    const copy = { ...e, id: randomUUID() };
    const blocks = await s.memory.list(e.id);
    const history = await s.memory.history(e.id);
    expect(await s2.entities.importEntity({ entity: copy, messages: [], blocks: [], keepIds: false, memory: { blocks, history } })).toBeNull();
    expect(await s.memory.list(copy.id)).toEqual(blocks);
    expect(await s.memory.history(copy.id)).toEqual(history);
  });
});
