import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitySubject } from '../../src/engine/support/lease.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { BlockRow, EntityRow, EntityTurnWrite, RotationRow, Store, TurnWindowWrite } from '../../src/store/types.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// The window history's store contract (issue 33): every implementation passes the same cases.
const dir = tempDir();
const factories: Array<{ name: string; open(): Promise<Store> }> = [{ name: 'sqlite', open: async () => SqliteStore.open(join(dir, 'history.db')) }];
const cluster = await startPostgres('the history store contract on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  factories.push({ name: 'postgres', open: async () => PostgresStore.open(await cluster.createDatabase('history'), { poolSize: 4 }) });
}

const T0 = '2026-01-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

describe.each(factories)('history store contract: $name', (factory) => {
  let s: Store;
  let accountId: string;
  beforeAll(async () => {
    s = await factory.open();
    accountId = randomUUID();
    await s.accounts.insert({ id: accountId, name: `a-${accountId}`, balanceUsd: null, userId: randomUUID(), createdAt: T0, rpm: null, tpm: null });
  });
  afterAll(() => s?.close());

  const entity = (): EntityRow => ({
    id: randomUUID(), accountId, name: 'e', instructions: 'be brief', instructionsTokens: 3, model: 'echo', state: 'none', budgetTokens: 4000,
    capTokens: 100000, transcriptMessages: 0, transcriptTokens: 0, windowTokens: 0, windowBlocks: 0, recall: 0, createdAt: T0, updatedAt: T0,
  });
  const block = (seq: number, over: Partial<BlockRow> = {}): BlockRow => ({
    id: randomUUID(), position: seq, kind: 'message', role: seq % 2 ? 'user' : 'assistant', content: `m${seq}`, tokens: 2, coversFrom: seq, coversTo: seq, ...over,
  });
  const rotation = (entityId: string, n: number, over: Partial<RotationRow> = {}): RotationRow => ({
    entityId, n, id: randomUUID(), createdAt: at(n), trigger: 'turn', seq: 2 * n + 1, fromSeq: 2 * n - 1, toSeq: 2 * n, summaryId: `s${n}`, coversFrom: 1,
    summaryText: `summary ${n}`, summaryTokens: 2, provider: 'openai', model: 'fake', promptTokens: 10, cachedTokens: null, completionTokens: 3,
    blocksBefore: '[[1,2]]', blocksAfter: `[${n}]`, foldedIds: '["a","b"]', undone: false, ...over,
  });
  const turnWindow = (seq: number, head = '[{"role":"system","content":"be brief"}]'): TurnWindowWrite => ({ seq, headSha256: `sha-${head.length}`, head, blocks: '[]', tail: null });

  /** A turn (user message `seq`, its reply) under a fresh lease, with what the history adds. */
  async function turn(e: EntityRow, seq: number, extra: Partial<EntityTurnWrite>, owner = randomUUID()): Promise<boolean> {
    await s.leases.acquire({ subject: entitySubject(e.id), owner, idempotencyKey: null, contentSha256: null, expiresAt: 10_000 }, 0);
    return s.entities.commitTurn({
      entityId: e.id, lease: { subject: entitySubject(e.id), owner: extra.lease?.owner ?? owner },
      messages: [{ seq, role: 'user', content: `m${seq}`, tokens: 2, createdAt: at(seq) }, { seq: seq + 1, role: 'assistant', content: `m${seq + 1}`, tokens: 2, createdAt: at(seq + 1) }],
      deleteBlockIds: [], insertBlocks: [block(seq), block(seq + 1)],
      counters: { transcriptMessages: seq + 1, transcriptTokens: 2 * seq + 2, windowTokens: 4, windowBlocks: 2, updatedAt: at(seq) },
      charge: { accountId, entityId: e.id, model: 'echo', inputTokens: 1, outputTokens: 1, costUsd: 0, createdAt: at(seq) },
      ...extra,
    });
  }

  it('writes a turn\'s rotation and window record with the turn, a head once per entity, and reads them back', async () => {
    const e = entity();
    await s.entities.insert(e);
    expect(await turn(e, 1, { turnWindow: turnWindow(1) })).toBe(true);
    const r1 = rotation(e.id, 1);
    expect(await turn(e, 3, { rotation: r1, turnWindow: turnWindow(3) })).toBe(true);
    expect(await turn(e, 5, { turnWindow: turnWindow(5, '[]') })).toBe(true);
    expect(await s.history.rotations(e.id)).toStrictEqual([r1]);
    expect(await s.history.lastRotation(e.id)).toBe(1);
    expect(await s.history.rotationsNumbered(e.id, [1, 7])).toStrictEqual([r1]);
    expect(await s.history.summaryWriter(e.id, 's1', 'summary 1')).toBe(1);
    expect(await s.history.summaryWriter(e.id, 's1', 'another text')).toBeUndefined();
    expect(await s.history.rotationsFolding(e.id, 2, 9)).toStrictEqual([r1]);
    expect(await s.history.rotationsFolding(e.id, 3, 9)).toStrictEqual([]);
    const h = await s.history.history(e.id);
    expect(h.heads.map((x) => x.messages)).toEqual(['[{"role":"system","content":"be brief"}]', '[]']);
    expect(h.turns.map((t) => [t.seq, t.headId])).toEqual([[1, h.heads[0].id], [3, h.heads[0].id], [5, h.heads[1].id]]);
    expect(await s.history.turnWindow(e.id, 3)).toStrictEqual({ seq: 3, headId: h.heads[0].id, blocks: '[]', tail: null, head: h.heads[0].messages });
    expect(await s.history.turnWindow(e.id, 7)).toBeUndefined();
    expect(await s.history.seqAt(e.id, at(4))).toBe(3);
    expect(await s.history.seqAt(e.id, at(0))).toBeUndefined();
  });

  it('writes no history when the turn\'s lease is not ours', async () => {
    const e = entity();
    await s.entities.insert(e);
    expect(await turn(e, 1, { rotation: rotation(e.id, 1), turnWindow: turnWindow(1), lease: { subject: entitySubject(e.id), owner: 'someone-else' } })).toBe(false);
    expect(await s.history.history(e.id)).toStrictEqual({ rotations: [], heads: [], turns: [] });
  });

  it('steers under the lease: the window rewritten whole with its counters, a record inserted or marked undone, the lease freed', async () => {
    const e = entity();
    await s.entities.insert(e);
    await turn(e, 1, {});
    const window = [block(1, { kind: 'summary', role: 'system', coversTo: 2, position: 1 })];
    const claim = { subject: entitySubject(e.id), owner: 'steer' };
    const r1 = rotation(e.id, 1, { trigger: 'manual', seq: null });
    expect(await s.history.steer({ entityId: e.id, lease: claim, window, windowTokens: 2, updatedAt: at(50), insert: r1 })).toBe(false);
    expect(await s.entities.window(e.id)).toHaveLength(2);
    await s.leases.acquire({ ...claim, idempotencyKey: null, contentSha256: null, expiresAt: 10_000 }, 0);
    expect(await s.history.steer({ entityId: e.id, lease: claim, window, windowTokens: 2, updatedAt: at(50), insert: r1 })).toBe(true);
    expect(await s.entities.window(e.id)).toStrictEqual(window);
    expect(await s.entities.get(accountId, e.id)).toMatchObject({ windowTokens: 2, windowBlocks: 1, updatedAt: at(50), transcriptMessages: 2 });
    expect(await s.leases.acquire({ ...claim, owner: 'undo', idempotencyKey: null, contentSha256: null, expiresAt: 10_000 }, 0)).toBeNull();
    const back = [block(1), block(2)];
    expect(await s.history.steer({ entityId: e.id, lease: { ...claim, owner: 'undo' }, window: back, windowTokens: 4, updatedAt: at(60), undo: 1 })).toBe(true);
    expect(await s.entities.window(e.id)).toStrictEqual(back);
    expect(await s.history.rotations(e.id)).toStrictEqual([{ ...r1, undone: true }]);
  });

  it('imports a history with the entity, renumbering heads; deleting the entity deletes its history', async () => {
    const e = entity();
    const heads = [{ id: 900, sha256: 'x', messages: '[]' }];
    const history = { rotations: [rotation('elsewhere', 1)], heads, turns: [{ seq: 1, headId: 900, blocks: '[[1,2]]', tail: '[]' }] };
    const messages = [1, 2].map((seq) => ({ seq, role: (seq % 2 ? 'user' : 'assistant') as 'user' | 'assistant', content: `m${seq}`, tokens: 2, createdAt: at(seq) }));
    expect(await s.entities.importEntity({ entity: e, messages, blocks: [block(1), block(2)], keepIds: false, history })).toBeNull();
    const got = await s.history.history(e.id);
    expect(got.rotations).toStrictEqual([{ ...history.rotations[0], entityId: e.id }]);
    expect(got.turns).toStrictEqual([{ ...history.turns[0], headId: got.heads[0].id }]);
    expect(got.heads).toStrictEqual([{ ...heads[0], id: got.heads[0].id }]);
    expect(await s.entities.delete(accountId, e.id)).toBe(true);
    expect(await s.history.history(e.id)).toStrictEqual({ rotations: [], heads: [], turns: [] });
  });
});
