import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

// The probes on the default store (PostgreSQL's are in e2e/postgres-cli.test.ts): no key needed.
describe('GET /healthz and /readyz', () => {
  it('answer without a key; /readyz is 503 with a reason once the database is gone, /healthz stays 200', async () => {
    const engine = makeEngine(tempDir('mgpt-health-'));
    const app = createApp(engine);
    const get = async (path: string) => {
      const res = await app.request(path);
      return { status: res.status, body: await res.json() };
    };
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'sqlite' } });
    await engine.close();
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', database: 'sqlite', error: expect.any(String), hint: expect.any(String) });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
