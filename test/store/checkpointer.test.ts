import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/checkpointer.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

describe('background checkpoints (mgpt serve)', () => {
  it('a worker with its own connection folds the WAL into the file, so commits on the event loop never checkpoint', async () => {
    const path = join(dir, 'ckpt.db');
    const store = SqliteStore.open(path);
    const db = store.db;
    const stop = store.checkpointInBackground();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(SERVER_AUTOCHECKPOINT_PAGES);
    const before = statSync(path).size;
    // About 2,000 pages: past the default threshold, where this connection would have checkpointed itself.
    db.exec('CREATE TABLE filler (x TEXT)');
    const insert = db.prepare('INSERT INTO filler (x) VALUES (?)');
    for (let i = 0; i < 2000; i++) insert.run('x'.repeat(4000));
    // Only the worker copies pages into the file: wait for it (bounded by the test's timeout).
    const folded = () => store.backgroundCheckpoints > 0 && statSync(path).size >= before + 2000 * 4000;
    while (!folded()) await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(db.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(2000);
    await store.close();
  });

  it('none for an in-memory database, and close() stops a running worker', async () => {
    const mem = SqliteStore.open(':memory:');
    await mem.checkpointInBackground()();
    expect(mem.backgroundCheckpoints).toBe(0);
    await mem.close();
    const store = SqliteStore.open(join(dir, 'close.db'));
    store.checkpointInBackground();
    await store.close();
    expect(store.db.open).toBe(false);
  });
});
