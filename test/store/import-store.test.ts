import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { prefixEnd } from '../../src/store/prefix-range.js';
import type { AccountRow, EntityRow, Store } from '../../src/store/types.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// What an import asks the store: the names taken under one prefix (numbering same-title
// conversations), on both stores.
const dir = tempDir();
const factories: { name: string; open: () => Promise<Store> }[] = [{ name: 'sqlite', open: async () => SqliteStore.open(join(dir, 'import.db')) }];
const cluster = await startPostgres('the import store cases on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  factories.push({ name: 'postgres', open: async () => PostgresStore.open(await cluster.createDatabase('imports'), { poolSize: 2 }) });
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
