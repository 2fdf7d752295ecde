import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migratePg } from '../../src/store/postgres/pg-db.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { entitySubject } from '../../src/engine/support/lease.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { prefixEnd } from '../../src/store/prefix-range.js';
import type { AccountRow, EntityRow, ImportSourceRow, Store } from '../../src/store/types.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// What an import asks the store: the names taken under one prefix (numbering same-title
// conversations) and where each conversation went per target, on both stores; and the upgrade of
// the rows an older mgpt wrote.
const dir = tempDir();
let dbs = 0;

/** A store, and the raw SQL to run on its database before the import-target migration (then opened at the newest schema). */
interface Factory {
  name: string;
  open: () => Promise<Store>;
  openAfter: (sqlBefore: string[]) => Promise<Store>;
}

const TARGET_MIGRATION = 'CREATE TABLE import_sources_v2';
const factories: Factory[] = [
  {
    name: 'sqlite',
    open: async () => SqliteStore.open(join(dir, `import-${dbs++}.db`)),
    openAfter: async (sql) => {
      const path = join(dir, `import-${dbs++}.db`);
      const raw = new Database(path);
      raw.pragma('foreign_keys = ON');
      const upTo = MIGRATIONS.findIndex((m) => m.includes(TARGET_MIGRATION));
      for (const [v, m] of MIGRATIONS.slice(0, upTo).entries()) {
        raw.exec(m);
        raw.pragma(`user_version = ${v + 1}`);
      }
      for (const q of sql) raw.exec(q);
      raw.close();
      return SqliteStore.open(path);
    },
  },
];
const cluster = await startPostgres('the import store cases on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  factories.push({
    name: 'postgres',
    open: async () => PostgresStore.open(await cluster.createDatabase(`imports_${dbs++}`), { poolSize: 2 }),
    openAfter: async (sql) => {
      const url = await cluster.createDatabase(`imports_${dbs++}`);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await migratePg(pool, PG_MIGRATIONS.slice(0, PG_MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN target'))));
        for (const q of sql) await pool.query(q);
      } finally {
        await pool.end();
      }
      return PostgresStore.open(url, { poolSize: 2 });
    },
  });
}

const T0 = '2026-01-01T00:00:00.000Z';

describe.each(factories)('import store cases: $name', (factory) => {
  let s: Store;
  beforeAll(async () => {
    s = await factory.open();
  });
  afterAll(async () => s?.close());

  async function account(): Promise<AccountRow> {
    const row: AccountRow = { id: randomUUID(), name: `acct-${randomUUID()}`, balanceUsd: null, userId: randomUUID(), createdAt: T0, rpm: null, tpm: null };
    await s.accounts.insert(row);
    return row;
  }

  function entity(accountId: string, name: string): EntityRow {
    return {
      id: randomUUID(), accountId, name, instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none', budgetTokens: 4000, capTokens: 100000,
      transcriptMessages: 0, transcriptTokens: 0, windowTokens: 0, windowBlocks: 0, recall: 0, createdAt: T0, updatedAt: T0,
    };
  }

  it('namesLike: the name itself and the names under the prefix, of this account only, byte for byte', async () => {
    const a = await account();
    const b = await account();
    const names = ['New chat', 'New chat (2)', 'New chat (10)', 'New chat (draft)', 'New chats', 'new chat (3)', 'New chat', 'Névé (2)', 'Névé', 'Névé 🙂 (2)', 'New chat )'];
    for (const n of names) await s.entities.insert(entity(a.id, n));
    await s.entities.insert(entity(b.id, 'New chat (4)'));
    const got = async (name: string, prefix: string) => (await s.entities.namesLike(a.id, name, prefix)).sort();
    expect(await got('New chat', 'New chat (')).toEqual(['New chat', 'New chat', 'New chat (10)', 'New chat (2)', 'New chat (draft)']);
    expect(await got('Névé', 'Névé (')).toEqual(['Névé', 'Névé (2)']);
    expect(await got('Névé 🙂', 'Névé 🙂 (')).toEqual(['Névé 🙂 (2)']);
    expect(await got('Nobody', 'Nobody (')).toEqual([]);
    // A prefix with no bound above it (all U+10FFFF): the range is open-ended.
    await s.entities.insert(entity(a.id, '\u{10FFFF}\u{10FFFF}'));
    expect(await got('\u{10FFFF}', '\u{10FFFF}')).toEqual(['\u{10FFFF}\u{10FFFF}']);
  });

  it('import sources: a row per target; saving again for a target moves that row on, the others stay', async () => {
    const a = await account();
    const own = entity(a.id, 'Trip plan');
    const all = entity(a.id, 'everything');
    const row = (e: EntityRow, target: string, last: string): ImportSourceRow => ({
      accountId: a.id, source: 'chatgpt', sourceId: 'conv-1', target, entityId: e.id, lastMessageId: last, sourceMessages: 2, importedAt: T0,
    });
    await s.entities.importChat({ create: { entity: own, messages: [], blocks: [], keepIds: false }, source: row(own, '', 'm2') });
    await s.entities.importChat({ create: { entity: all, messages: [], blocks: [], keepIds: false }, source: row(all, all.id, 'm2') });
    const byTarget = async () => (await s.entities.importSources(a.id, 'chatgpt', ['conv-1'])).sort((x, y) => x.target.localeCompare(y.target));
    expect(await byTarget()).toStrictEqual([row(own, '', 'm2'), row(all, all.id, 'm2')]);
    await s.entities.importChat({ create: { entity: entity(a.id, 'x'), messages: [], blocks: [], keepIds: false }, source: { ...row(all, all.id, 'm4'), sourceMessages: 4 } });
    expect((await byTarget()).map((r) => [r.target === '' ? 'own' : 'into', r.lastMessageId])).toEqual([['own', 'm2'], ['into', 'm4']]);
    await s.entities.delete(a.id, own.id);
    expect((await byTarget()).map((r) => r.target)).toEqual([all.id]);
  });
});

describe.each(factories)('an import\'s rotation record: $name', (factory) => {
  it('is written with the conversation that folds, then rewritten in place by the next (trigger import)', async () => {
    const s = await factory.open();
    try {
      const e: EntityRow = {
        id: randomUUID(), accountId: 'local', name: 'all', instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none', budgetTokens: 4000, capTokens: 100000,
        transcriptMessages: 2, transcriptTokens: 4, windowTokens: 3, windowBlocks: 1, recall: 0, createdAt: T0, updatedAt: T0,
      };
      const msg = (seq: number) => ({ seq, role: (seq % 2 ? 'user' : 'assistant') as 'user' | 'assistant', content: `m${seq}`, tokens: 2, createdAt: T0 });
      const summary = { id: randomUUID(), position: 1, kind: 'summary' as const, role: 'system' as const, content: 'Messages 1-2 were imported.', tokens: 3, coversFrom: 1, coversTo: 2 };
      const rotation = {
        entityId: e.id, n: 1, id: randomUUID(), createdAt: T0, trigger: 'import' as const, seq: null, fromSeq: 1, toSeq: 2, summaryId: summary.id, coversFrom: 1,
        summaryText: summary.content, summaryTokens: 3, provider: 'mgpt', model: 'import-note', promptTokens: 0, cachedTokens: null, completionTokens: 0,
        blocksBefore: '[[1,2]]', blocksAfter: '[1]', foldedIds: '["a","b"]', undone: false,
      };
      const source = (id: string): ImportSourceRow => ({ accountId: 'local', source: 'chatgpt', sourceId: id, target: e.id, entityId: e.id, lastMessageId: 'x', sourceMessages: 2, importedAt: T0 });
      await s.entities.importChat({ create: { entity: e, messages: [msg(1), msg(2)], blocks: [summary], keepIds: false }, source: source('c1'), rotation });
      expect(await s.history.rotations(e.id)).toStrictEqual([rotation]);
      const owner = `import-${randomUUID()}`;
      await s.leases.acquire({ subject: entitySubject(e.id), owner, idempotencyKey: null, contentSha256: null, expiresAt: 60_000 }, 0);
      const wider = { ...summary, id: randomUUID(), content: 'Messages 1-4 were imported.', coversTo: 4 };
      const append = {
        entityId: e.id, lease: { subject: entitySubject(e.id), owner }, messages: [msg(3), msg(4)], deleteBlockIds: [summary.id], insertBlocks: [wider],
        counters: { transcriptMessages: 4, transcriptTokens: 8, windowTokens: 3, windowBlocks: 1, updatedAt: T0 },
      };
      const rewritten = { ...rotation, toSeq: 4, summaryId: wider.id, summaryText: wider.content, blocksBefore: '[[1,4]]', foldedIds: '["a","b","c","d"]' };
      expect(await s.entities.importChat({ append, source: source('c2'), rotation: rewritten })).toBe(true);
      expect(await s.history.rotations(e.id)).toStrictEqual([rewritten]);
    } finally {
      await s.close();
    }
  });
});

describe.each(factories)('import sources written by an older mgpt: $name', (factory) => {
  it('an entity several conversations went to was an --into one: its rows get it as target; a lone one is its own', async () => {
    const ent = (id: string, name: string) =>
      `INSERT INTO entities (id, account_id, name, instructions, model, state, budget_tokens, cap_tokens, created_at, updated_at)
       VALUES ('${id}', 'local', '${name}', '', 'mgpt-1-27b', 'none', 32000, 1000000, 't', 't')`;
    const src = (conv: string, entityId: string) =>
      `INSERT INTO import_sources (account_id, source, source_id, entity_id, last_message_id, source_messages, imported_at)
       VALUES ('local', 'chatgpt', '${conv}', '${entityId}', 'last', 2, 't')`;
    const s = await factory.openAfter([ent('e-own', 'Trip plan'), ent('e-all', 'everything'), src('c1', 'e-own'), src('c2', 'e-all'), src('c3', 'e-all')]);
    try {
      const rows = await s.entities.importSources('local', 'chatgpt', ['c1', 'c2', 'c3']);
      expect(rows.map((r) => [r.sourceId, r.target, r.entityId]).sort()).toEqual([['c1', '', 'e-own'], ['c2', 'e-all', 'e-all'], ['c3', 'e-all', 'e-all']]);
    } finally {
      await s.close();
    }
  });
});

describe('prefixEnd', () => {
  it('is the next code point after the last, carrying past U+10FFFF and over the surrogates', () => {
    expect(prefixEnd('New chat (')).toBe('New chat )');
    expect(prefixEnd('a\u{10FFFF}')).toBe('b');
    expect(prefixEnd('\u{10FFFF}')).toBeNull();
    expect(prefixEnd('x\uD7FF')).toBe('x\uE000');
    expect(prefixEnd('🙂')).toBe('🙃');
  });
});
