import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { PromptRow, Store } from '../../src/store/types.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// Stored prompts behind the Store seam (issue 34, item 7): both stores, and two replicas on one database.
interface StoreFactory {
  name: string;
  blank(): Promise<string>;
  open(target: string): Promise<Store>;
}

const dir = tempDir('mgpt-prompt-store-');
let files = 0;
const factories: StoreFactory[] = [{ name: 'sqlite', blank: async () => join(dir, `${files++}.db`), open: async (path) => SqliteStore.open(path) }];
const cluster = await startPostgres('the stored-prompt contract on PostgreSQL');
if (cluster) {
  afterAll(() => cluster.stop());
  let n = 0;
  factories.push({ name: 'postgres', blank: async () => cluster.createDatabase(`prompts_${n++}`), open: (url) => PostgresStore.open(url, { poolSize: 2 }) });
}

const row = (name: string, over: Partial<PromptRow> = {}): PromptRow & { text: string } => ({
  name,
  responseFormat: null,
  additionalInstructions: null,
  source: null,
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
  text: over.text ?? `You are ${name}.`,
});

describe.each(factories)('stored prompts: $name', (factory) => {
  let s: Store;
  /** Another replica on the same database. */
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

  it('stores a prompt every replica reads, with its contract and additional instructions', async () => {
    const full = row('narrator', { responseFormat: '{"type":"json_object"}', additionalInstructions: 'Be brief.', source: '/p/narrator.md' });
    expect(await s.prompts.insert(full, { overRemoved: false })).toBe(true);
    expect(await s2.prompts.get('narrator')).toEqual(full);
    expect(await s2.prompts.get('nobody')).toBeUndefined();
  });

  it('never replaces a live prompt on insert; put does', async () => {
    await s.prompts.insert(row('keeper'), { overRemoved: false });
    expect(await s2.prompts.insert(row('keeper', { text: 'other' }), { overRemoved: false })).toBe(false);
    expect(await s2.prompts.insert(row('keeper', { text: 'other' }), { overRemoved: true })).toBe(false);
    expect((await s.prompts.get('keeper'))?.text).toBe('You are keeper.');
    await s2.prompts.put(row('keeper', { text: 'replaced' }));
    expect((await s.prompts.get('keeper'))?.text).toBe('replaced');
  });

  it('keeps a removed prompt as a tombstone: an import leaves it removed, an explicit add revives it', async () => {
    await s.prompts.insert(row('gone'), { overRemoved: false });
    expect(await s2.prompts.remove('gone', '2026-01-02T00:00:00.000Z')).toBe(true);
    expect(await s.prompts.remove('gone', '2026-01-02T00:00:00.000Z')).toBe(false);
    expect(await s.prompts.get('gone')).toMatchObject({ name: 'gone', text: null, updatedAt: '2026-01-02T00:00:00.000Z' });
    expect(await s.prompts.insert(row('gone', { source: '/p/gone.md' }), { overRemoved: false })).toBe(false);
    expect((await s.prompts.get('gone'))?.text).toBeNull();
    expect(await s.prompts.insert(row('gone', { text: 'back' }), { overRemoved: true })).toBe(true);
    expect((await s2.prompts.get('gone'))?.text).toBe('back');
    expect(await s.prompts.remove('never-stored', '2026-01-02T00:00:00.000Z')).toBe(false);
  });

  it("refreshes a live prompt from its own file only: never a tombstone, never one replaced by hand", async () => {
    await s.prompts.insert(row('filed', { source: '/p/filed.md' }), { overRemoved: false });
    const edited = row('filed', { text: 'Edited.', additionalInstructions: 'More.', source: '/p/filed.md', updatedAt: '2026-01-04T00:00:00.000Z' }) as PromptRow & { text: string; source: string };
    expect(await s2.prompts.refresh(edited)).toBe(true);
    expect(await s.prompts.get('filed')).toEqual(edited);
    expect(await s.prompts.refresh({ ...edited, source: '/elsewhere/filed.md' })).toBe(false);
    await s.prompts.put(row('filed', { text: 'By hand.' }));
    expect(await s2.prompts.refresh({ ...edited, text: 'From the file again.' })).toBe(false);
    expect((await s.prompts.get('filed'))?.text).toBe('By hand.');
    await s.prompts.insert(row('filed-gone', { source: '/p/filed-gone.md' }), { overRemoved: false });
    await s.prompts.remove('filed-gone', '2026-01-05T00:00:00.000Z');
    expect(await s2.prompts.refresh({ ...edited, name: 'filed-gone', source: '/p/filed-gone.md' })).toBe(false);
    expect((await s.prompts.get('filed-gone'))?.text).toBeNull();
    expect(await s.prompts.refresh({ ...edited, name: 'never-stored' })).toBe(false);
  });

  it('lists every row by name, tombstones included', async () => {
    await s.prompts.remove('keeper', '2026-01-03T00:00:00.000Z');
    const list = await s2.prompts.list();
    expect(list.map((r) => [r.name, r.text === null])).toEqual([
      ['filed', false],
      ['filed-gone', true],
      ['gone', false],
      ['keeper', true],
      ['narrator', false],
    ]);
  });
});
