import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { VectorCache } from '../../src/engine/entities/semantic/vector-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { VectorStore } from '../../src/store/types.js';
import { tempDir } from '../helpers/temp.js';

const v = (...xs: number[]) => Float32Array.from(xs);

describe('the vectors held in memory', () => {
  it('are read once, take this process\'s own writes, and are read again when another process wrote, or for another model', async () => {
    const path = join(tempDir(), 'cache.db');
    const store = SqliteStore.open(path);
    const other = SqliteStore.open(path);
    try {
      store.db.prepare(`INSERT INTO entities (id, account_id, name, instructions, model, state, budget_tokens, cap_tokens, created_at, updated_at)
        VALUES ('e1', 'local', 'ada', '', 'm', 'none', 32000, 1000000, 't', 't')`).run();
      const insert = store.db.prepare(`INSERT INTO messages (entity_id, seq, role, content, tokens, created_at) VALUES ('e1', ?, 'user', 'x', 1, 't')`);
      for (const seq of [1, 2, 3, 4]) insert.run(seq);
      await store.vectors.put('e1', 'a', [{ seq: 1, vector: v(3, 4) }, { seq: 2, vector: v(0, 2) }]);
      let reads = 0;
      const counting: VectorStore = { ...store.vectors, vectors: (...args) => (reads++, store.vectors.vectors(...args)) };
      const cache = new VectorCache(counting);
      const seqs = async (model = 'a') => (await cache.vectors('e1', model)).map((r) => r.seq).sort();
      expect((await cache.vectors('e1', 'a')).map((r) => [...r.vector])).toEqual([[Math.fround(0.6), Math.fround(0.8)], [0, 1]]);
      expect(await seqs()).toEqual([1, 2]);
      expect(reads).toBe(1);
      // This process stored one more: held without reading again.
      await store.vectors.put('e1', 'a', [{ seq: 3, vector: v(1, 0) }]);
      cache.added('e1', 'a', [{ seq: 3, vector: v(1, 0) }]);
      expect(await seqs()).toEqual([1, 2, 3]);
      expect(reads).toBe(1);
      // Another process stored one: the count differs, so the copy is read again.
      await other.vectors.put('e1', 'a', [{ seq: 4, vector: v(5, 0) }]);
      expect(await seqs()).toEqual([1, 2, 3, 4]);
      expect(reads).toBe(2);
      // Another model: its own vectors (none yet), never the other model's.
      expect(await seqs('b')).toEqual([]);
      expect(reads).toBe(3);
    } finally {
      await store.close();
      await other.close();
    }
  });
});
