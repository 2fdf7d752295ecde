import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The pinned memory routes (issue 33) on the wire, exactly as the web console builds against them:
 * GET /v1/entities/{id}/memory (and ?history=true), GET|PUT|DELETE /v1/entities/{id}/memory/{label}.
 */
const dir = tempDir('mgpt-memory-routes-');
let engine: Engine;
let server: Listening;
let key: string;
let id: string;

beforeAll(async () => {
  engine = makeEngine(dir);
  key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  server = await listen(engine, '127.0.0.1', 0);
  id = (await engine.entities.create({ model: 'mgpt-1-27b' }, 'local')).id;
});
afterAll(async () => {
  await server.close();
  await engine.close();
});

const call = (method: string, path: string, body?: unknown, auth = true) =>
  fetch(`${server.url}/v1/entities/${id}${path}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('memory routes', () => {
  it('PUT answers the block, GET lists {memory, tokens, limits}, GET one answers it, DELETE answers 204, history lists changes', async () => {
    const put = await call('PUT', '/memory/user', { text: 'Ada, a DBA' });
    expect(put.status).toBe(200);
    const block = await put.json();
    expect(block).toEqual({ label: 'user', text: 'Ada, a DBA', tokens: expect.any(Number), updated_at: expect.stringMatching(ISO) });
    expect(Object.keys(block)).toEqual(['label', 'text', 'tokens', 'updated_at']);
    const list = await (await call('GET', '/memory')).json();
    expect(list).toEqual({ memory: [block], tokens: block.tokens, limits: { blocks: 16, tokens: 2000 } });
    expect(await (await call('GET', '/memory/user')).json()).toEqual(block);
    const del = await call('DELETE', '/memory/user');
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    const history = await (await call('GET', '/memory?history=true')).json();
    expect(history).toEqual({
      history: [
        { label: 'user', before: null, after: 'Ada, a DBA', source: 'user', created_at: expect.stringMatching(ISO) },
        { label: 'user', before: 'Ada, a DBA', after: null, source: 'user', created_at: expect.stringMatching(ISO) },
      ],
    });
    expect(Object.keys(history.history[0])).toEqual(['label', 'before', 'after', 'source', 'created_at']);
  });

  it('bad input gets a 400 with {error}, a missing block or entity a 404, no key a 401; nothing changes', async () => {
    const cases: Array<[string, string, unknown, number]> = [
      ['PUT', '/memory/user', { text: 'x', extra: 1 }, 400],
      ['PUT', '/memory/user', {}, 400],
      ['PUT', '/memory/user', { text: 7 }, 400],
      ['PUT', '/memory/user', '{not json', 400],
      ['PUT', '/memory/bad%20label', { text: 'x' }, 400],
      ['PUT', `/memory/${'x'.repeat(65)}`, { text: 'x' }, 400],
      ['PUT', '/memory/user', { text: 'word '.repeat(2100) }, 400],
      ['GET', '/memory?history=maybe', undefined, 400],
      ['GET', '/memory/absent', undefined, 404],
      ['DELETE', '/memory/absent', undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(typeof (await res.json()).error).toBe('string');
    }
    expect((await call('GET', '/memory', undefined, false)).status).toBe(401);
    const other = await fetch(`${server.url}/v1/entities/00000000-0000-4000-8000-00000000dead/memory`, { headers: { authorization: `Bearer ${key}` } });
    expect(other.status).toBe(404);
    expect((await (await call('GET', '/memory')).json()).memory).toEqual([]);
    expect((await (await call('GET', '/memory?history=true')).json()).history).toHaveLength(2);
  });
});
