import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/core/errors.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

/** A store on `path` that counts key reads. */
function counting(path: string): { store: SqliteStore; reads: () => number } {
  const store = SqliteStore.open(path);
  let reads = 0;
  const byPublicId = store.keys.byPublicId.bind(store.keys);
  store.keys.byPublicId = async (id: string) => {
    reads++;
    return byPublicId(id);
  };
  return { store, reads: () => reads };
}

describe('the API key cache', () => {
  it('a key checked once is not read again while no other process wrote', async () => {
    const path = join(dir, 'cache.db');
    const { store, reads } = counting(path);
    const engine = openEngineSync({ db: store });
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const first = await engine.keys.authenticate(key);
    for (let i = 0; i < 5; i++) expect(await engine.keys.authenticate(key)).toEqual(first);
    expect(reads()).toBe(1);
    // A wrong secret for the same public id is never a hit.
    await expect(engine.keys.authenticate(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'))).rejects.toThrow(AuthError);
    await engine.close();
  });

  it('a revocation by another connection (another process) is seen by the next request', async () => {
    const path = join(dir, 'revoke.db');
    const server = openEngineSync({ db: path });
    const created = await server.keys.create('local', ['mgpt.responses:create']);
    await server.keys.authenticate(created.key!);
    await server.keys.authenticate(created.key!); // cached now
    const other = openEngineSync({ db: path });
    await other.keys.revoke(created.id);
    await expect(server.keys.authenticate(created.key!)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/revoked/) });
    await other.close();
    await server.close();
  });

  it('a revocation by this process is seen at once', async () => {
    const engine = openEngineSync({ db: join(dir, 'own.db') });
    const created = await engine.keys.create('local', ['mgpt.responses:create']);
    await engine.keys.authenticate(created.key!);
    await engine.keys.revoke(created.id);
    await expect(engine.keys.authenticate(created.key!)).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/revoked/) });
    await engine.close();
  });
});

describe('an expiring key', () => {
  it('works until its end, also from the cache, then is refused; a renewal moves the end; renewing a revoked one fails', async () => {
    let now = Date.parse('2026-11-27T10:00:00.000Z');
    const clock = { now: () => now, iso: () => new Date(now).toISOString() };
    const { store, reads } = counting(join(dir, 'expiry.db'));
    const engine = openEngineSync({ db: store, clock });
    const created = await engine.keys.create('local', ['mgpt.admin'], {}, { lifetimeMs: 60_000 });
    expect(created.expiresAt).toBe('2026-11-27T10:01:00.000Z');
    await engine.keys.authenticate(created.key!);
    now += 59_000;
    await engine.keys.authenticate(created.key!);
    expect(reads()).toBe(1);
    // Past its end the cached check is not trusted: the key is read again, and refused.
    now += 1_000;
    await expect(engine.keys.authenticate(created.key!)).rejects.toThrow('this API key expired at 2026-11-27T10:01:00.000Z');
    // A renewal (its console still runs) brings it back for a lifetime from now.
    await engine.keys.renew(created.id, 60_000);
    expect((await engine.keys.list()).find((k) => k.id === created.id)?.expiresAt).toBe('2026-11-27T10:02:00.000Z');
    await engine.keys.authenticate(created.key!);
    await expect(engine.keys.create('local', ['mgpt.admin'], {}, { lifetimeMs: 10 })).rejects.toThrow('a key lifetime must be a whole number of milliseconds, at least 1000');
    await engine.keys.revoke(created.id);
    await expect(engine.keys.renew(created.id, 60_000)).rejects.toThrow(`no expiring key ${created.id} that is not revoked`);
    await expect(engine.keys.authenticate(created.key!)).rejects.toThrow('this API key was revoked');
    await engine.close();
  });
});
