import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Stream } from 'openai/streaming';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { snapshot } from '../helpers/snapshot.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string; // local account, every scope
let other: string; // another account, every scope
let narrow: string; // local account, logs only
let revoked: string;
let localUser: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'), { recursive: true });
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate. HIDDEN-PROMPT-9.\n');
  engine = makeEngine(dir, { fake, promptsDir: join(dir, 'prompts') });
  const all = ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read'];
  key = (await engine.keys.create('local', all)).key!;
  await engine.accounts.create('acme');
  other = (await engine.keys.create('acme', all)).key!;
  narrow = (await engine.keys.create('local', ['mgpt.logs:read'])).key!;
  const r = await engine.keys.create('local', all);
  await engine.keys.revoke(r.id);
  revoked = r.key!;
  localUser = (await engine.accounts.find('local')).userId;
  server = await listen(engine, '127.0.0.1', 0);
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

async function call(method: string, path: string, opts: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  const k = opts.key === undefined ? key : opts.key;
  if (k !== null) headers.authorization = `Bearer ${k}`;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(server.url + path, { method, headers, body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // SSE or tar
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe('mgpt serve: entities', () => {
  it('creates, lists, reads, streams and deletes with the seed status codes and shapes', async () => {
    const created = await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b', name: 'web' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ object: 'entity', entity_id: created.json.id, window: { budget_tokens: 32000, tokens: 0, blocks: 0 } });
    expect(created.headers.get('x-request-id')).toBeTruthy();
    const id = created.json.id;
    const list = await call('GET', '/v1/entities');
    expect(list.json.object).toBe('list');
    expect(list.json.data[0].window).toEqual({ budget_tokens: 32000 });
    fake.script({ text: ['Hi', ' there'] });
    const sse = await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'hello' }, headers: { 'x-request-id': 'corr-1' } });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(sse.headers.get('x-entity-id')).toBe(id);
    expect(sse.headers.get('x-request-id')).toBe('corr-1');
    const frames = sse.text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Hi' }, { content: ' there' }, {}, undefined]);
    expect(chunks.at(-1).usage).toMatchObject({ completion_tokens: expect.any(Number) });
    const buffered = await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'again', stream: false } });
    expect(buffered.json).toMatchObject({ object: 'chat.completion', entity_id: id, choices: [{ message: { content: 'reply: again' } }] });
    const page = await call('GET', `/v1/entities/${id}/messages?after=1&limit=2`);
    expect(page.json).toMatchObject({ object: 'list', entity_id: id, has_more: true, next_after: 3 });
    const window = await call('GET', `/v1/entities/${id}/window`);
    expect(window.json).toMatchObject({ object: 'entity.window', entity_id: id, tokens: expect.any(Number) });
    const tar = await fetch(`${server.url}/v1/entities/${id}/export`, { headers: { authorization: `Bearer ${key}`, accept: 'application/x-svc-entity' } });
    expect(tar.headers.get('content-type')).toBe('application/x-svc-entity');
    const tarPath = join(dir, 'web.tar');
    writeFileSync(tarPath, Buffer.from(await tar.arrayBuffer()));
    expect(execFileSync('tar', ['-tf', tarPath], { encoding: 'utf8' })).toBe('manifest.json\ntranscript.json\nwindow.json\nrotations.json\nmemory.json\n');
    const json = await call('GET', `/v1/entities/${id}/export`);
    expect(json.headers.get('content-type')).toMatch(/application\/json/);
    expect(json.json.transcript).toHaveLength(4);
    expect((await call('DELETE', `/v1/entities/${id}`)).status).toBe(202);
    expect((await call('GET', `/v1/entities/${id}`)).json).toEqual({ error: expect.stringMatching(/no entity/) });
  });

  it("streams to the official openai SDK's reader, text and usage", async () => {
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id;
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
    fake.script({ text: ['Streamed', ' through', ' the SDK.'], usage: { prompt_tokens: 11, completion_tokens: 4 } });
    const stream = await client.post<Stream<OpenAI.ChatCompletionChunk>>(`/entities/${id}/messages`, { body: { content: 'hi' }, stream: true });
    let text = '';
    let usage: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Streamed through the SDK.');
    expect(usage).toEqual({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
  });

  it('a client killed mid-stream leaves the entity unchanged; the retry with the same key completes once', async () => {
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id;
    await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'first', stream: false } });
    const before = snapshot(sqliteOf(engine).db.name, id);
    const abortedBefore = fake.aborted;
    fake.script({ text: 'a slow reply that the client will never see the end of', chunkDelayMs: 80 });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${server.url}/v1/entities/${id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'kill-1' },
      });
      req.on('response', (res) => res.once('data', () => {
        req.destroy();
        resolve();
      }));
      req.on('error', (e) => (e.message.includes('socket hang up') || (e as any).code === 'ECONNRESET' ? resolve() : reject(e)));
      req.end(JSON.stringify({ content: 'interrupted' }));
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.aborted - abortedBefore).toBe(1);
    expect(snapshot(sqliteOf(engine).db.name, id)).toEqual(before);
    const retry = await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'interrupted', stream: false }, headers: { 'idempotency-key': 'kill-1' } });
    expect(retry.status).toBe(200);
    const again = await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'interrupted', stream: false }, headers: { 'idempotency-key': 'kill-1' } });
    expect(again.json).toEqual(retry.json);
    expect(snapshot(sqliteOf(engine).db.name, id).transcript.map((m: any) => m.content)).toEqual(['first', 'reply: first', 'interrupted', 'reply: interrupted']);
  });

  it('answers 409 to a second writer and 402 with the balance fields', async () => {
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id;
    fake.script({ text: 'slow one two three', chunkDelayMs: 100 });
    const first = call('POST', `/v1/entities/${id}/messages`, { body: { content: 'a' } });
    await new Promise((r) => setTimeout(r, 150));
    const second = await call('POST', `/v1/entities/${id}/messages`, { body: { content: 'b' } });
    expect(second.status).toBe(409);
    // The seed's { error }, plus the entity it is about by id (an extension: the message names it by name);
    // the error's code rides in a header the remote backend reads.
    expect(second.json).toEqual({ error: expect.any(String), entity_id: id });
    expect(second.headers.get('mgpt-error-code')).toBe('busy');
    await first;
    const acme = await engine.accounts.find('acme');
    const eid = (await call('POST', '/v1/entities', { key: other, body: { model: 'mgpt-1-27b' } })).json.id;
    await engine.accounts.topup(acme.id, 0.0000001);
    const poor = await call('POST', `/v1/entities/${eid}/messages`, { key: other, body: { content: 'many words cost more than nothing at all' } });
    expect(poor.status).toBe(402);
    expect(poor.json).toEqual({ error: expect.any(String), balanceUsd: 0.0000001, billedUsd: expect.any(Number), missingUsd: expect.any(Number) });
    expect(poor.headers.get('mgpt-error-code')).toBe('payment_required');
  });
});

describe('mgpt serve: PATCH /v1/entities/{id} (an extension)', () => {
  it('answers 200 with the entity exactly as GET shows it', async () => {
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b', name: 'patch-me' } })).json.id;
    const res = await call('PATCH', `/v1/entities/${id}`, { body: { name: 'patched', instructions: 'Be brief.', budget_tokens: 900 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.json).toEqual((await call('GET', `/v1/entities/${id}`)).json);
    expect(res.json).toMatchObject({ object: 'entity', name: 'patched', instructions: 'Be brief.', model: 'mgpt-1-27b', window: { budget_tokens: 900, tokens: 0, blocks: 0 } });
    expect(res.json.entity_id).toBeUndefined();
  });

  it('answers 400 with { error } to malformed JSON, unknown fields, a model, wrong types and an empty body; 404 to an unknown id', async () => {
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b', name: 'steady' } })).json.id;
    const before = (await call('GET', `/v1/entities/${id}`)).json;
    const path = `/v1/entities/${id}`;
    const refused: Array<{ raw?: string; body?: unknown; headers?: Record<string, string>; error: RegExp }> = [
      ...['{', '{"name":', '{}}', 'NaN', '\u0000', ''].map((raw) => ({ raw, error: /malformed JSON body/ })),
      ...['[]', 'null', '"x"', '42', 'true'].map((raw) => ({ raw, error: /the update must be a JSON object/ })),
      { raw: '{"name":"x"}', headers: { 'content-type': 'text/plain' }, error: /Content-Type must be application\/json/ },
      { body: {}, error: /nothing to update/ },
      { body: { colour: 'red' }, error: /^unknown fields: colour; an update takes name, instructions, budget_tokens, cap_tokens, recall, recall_tokens, memory_tool$/ },
      { body: { name: 'x', id: 'other', object: 'entity' }, error: /^unknown fields: id, object;/ },
      { body: { model: 'mgpt-1-27b' }, error: /^model cannot change/ },
      { body: { model: 'gpt-4o', budget_tokens: 500 }, error: /^model cannot change/ },
      ...[1, true, null, [], {}].map((v) => ({ body: { name: v }, error: /^name must be a string$/ })),
      { body: { name: 'n'.repeat(201) }, error: /^name is 201 characters; the limit is 200$/ },
      ...[1, false, null, ['a'], { text: 'a' }].map((v) => ({ body: { instructions: v }, error: /^instructions must be a string$/ })),
      ...['500', 1.5, true, null, [], {}, -1, 0, 15, 1_000_001, 1e300].map((v) => ({
        body: { budget_tokens: v },
        error: /^budget_tokens must be an integer from 16 to 1000000, got /,
      })),
    ];
    for (const r of refused) {
      const res = await call('PATCH', path, { raw: r.raw, body: r.body, headers: r.headers });
      const what = String(r.raw ?? JSON.stringify(r.body));
      expect(res.status, what).toBe(400);
      expect(Object.keys(res.json), what).toEqual(['error']);
      expect(res.json.error, what).toMatch(r.error);
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    const big = await call('PATCH', path, { body: { instructions: 'x'.repeat(2 * 1024 * 1024) } });
    expect(big.status).toBe(413);
    for (const missing of ['00000000-0000-4000-8000-000000000000', 'x', '%00', '..%2Fetc']) {
      const res = await call('PATCH', `/v1/entities/${missing}`, { body: { name: 'ghost' } });
      expect([missing, res.status, Object.keys(res.json)]).toEqual([missing, 404, ['error']]);
    }
    // Another account's entity is indistinguishable from a missing one.
    const theirs = await call('PATCH', path, { key: other, body: { name: 'taken' } });
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual({ error: `no entity ${id} on this account` });
    // Validation comes before the lookup, as for messages: a bad body to a missing entity is 400.
    expect((await call('PATCH', '/v1/entities/00000000-0000-4000-8000-000000000000', { body: { model: 'x' } })).status).toBe(400);
    expect((await call('GET', path)).json).toEqual(before);
  });
});

describe('mgpt serve: universes', () => {
  it('creates (201), responds (200), generates images and lists logs under both prefixes', async () => {
    for (const prefix of ['/api/mgpt', '/backend-api/mgpt']) {
      const created = await call('POST', `${prefix}/universes`, { body: { storedPrompt: 'narrator', displayName: 'web' } });
      expect(created.status).toBe(201);
      expect(created.json).toEqual({ universe: expect.any(String), userId: localUser, prompt: { storedPrompt: 'narrator', stored: true } });
      const r = await call('POST', `${prefix}/responses`, { body: { model: 'game-1-lite-frozen', universe: created.json.universe, userInput: 'hello' } });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ assistantRaw: 'reply: hello', promptFingerprint: expect.stringMatching(/^sha256:/) });
      expect(JSON.stringify(r.json)).not.toContain('HIDDEN-PROMPT');
      const img = await call('POST', `${prefix}/images`, { body: { sceneUid: 's', systemPrompt: 'x', description: 'y' } });
      expect(img.json).toMatchObject({ sceneUid: 's', model: 'image-1', images: [{ mimeType: 'image/png' }] });
      const logs = await call('GET', `${prefix}/logs?ownerUserId=${localUser}&kind=image&page=1&pageSize=5`);
      expect(logs.json).toMatchObject({ page: 1, pageSize: 5, hasMore: expect.any(Boolean) });
      expect(logs.json.data.every((l: any) => l.kind === 'image')).toBe(true);
      const detail = await call('GET', `${prefix}/logs?ownerUserId=${localUser}&identifier=${logs.json.data[0].id}`);
      expect(detail.json).toMatchObject({ id: logs.json.data[0].id, request: expect.any(Object) });
    }
    const notFound = await call('POST', '/api/mgpt/responses', { body: { model: 'game-1-lite-frozen', universe: '00000000-0000-4000-8000-0000000000ff', userInput: 'x' } });
    expect([notFound.status, notFound.json]).toEqual([404, { detail: 'Universe not found' }]);
  });
});

describe('mgpt serve: auth matrix', () => {
  it('gives every route exactly the seed status and error shape', async () => {
    const eid = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id;
    const uid = (await call('POST', '/api/mgpt/universes', { body: { storedPrompt: 'narrator' } })).json.universe;
    const routes: Array<{ method: string; path: string; body?: unknown; scope: string; owned?: 'entity' | 'universe' }> = [
      { method: 'POST', path: '/v1/entities', body: { model: 'mgpt-1-27b' }, scope: 'responses' },
      { method: 'GET', path: '/v1/entities', scope: 'responses' },
      { method: 'GET', path: `/v1/entities/${eid}`, scope: 'responses', owned: 'entity' },
      { method: 'GET', path: `/v1/entities/${eid}/messages`, scope: 'responses', owned: 'entity' },
      { method: 'POST', path: `/v1/entities/${eid}/messages`, body: { content: 'x', stream: false }, scope: 'responses', owned: 'entity' },
      { method: 'GET', path: `/v1/entities/${eid}/window`, scope: 'responses', owned: 'entity' },
      { method: 'GET', path: `/v1/entities/${eid}/export`, scope: 'responses', owned: 'entity' },
      { method: 'PATCH', path: `/v1/entities/${eid}`, body: { name: 'x' }, scope: 'responses', owned: 'entity' },
      { method: 'DELETE', path: `/v1/entities/${eid}`, scope: 'responses', owned: 'entity' },
      { method: 'POST', path: '/api/mgpt/universes', body: { storedPrompt: 'narrator' }, scope: 'responses' },
      { method: 'POST', path: '/api/mgpt/responses', body: { model: 'game-1-lite-frozen', universe: uid, userInput: 'x' }, scope: 'responses', owned: 'universe' },
      { method: 'POST', path: '/api/mgpt/images', body: { sceneUid: 's', systemPrompt: 'x', description: 'y' }, scope: 'images' },
      { method: 'GET', path: `/api/mgpt/logs?ownerUserId=${localUser}`, scope: 'logs' },
    ];
    const noScope = (await engine.keys.create('local', ['mgpt.images:create'])).key!;
    const shape = (path: string, json: any) => (path.startsWith('/v1/') ? Object.keys(json) : Object.keys(json).filter((k) => k !== 'errors'));
    for (const r of routes) {
      const cases: Array<[string | null, number]> = [
        [null, 401],
        ['not-a-key', 401],
        ['mgpt_live_0123456789abcdef.' + 'A'.repeat(43), 401],
        [revoked, 401],
        [r.scope === 'images' ? narrow : r.scope === 'logs' ? noScope : narrow, 403],
      ];
      for (const [k, status] of cases) {
        const res = await call(r.method, r.path, { key: k, body: r.body });
        expect(res.status, `${r.method} ${r.path} with ${k?.slice(0, 12)}`).toBe(status);
        expect(shape(r.path, res.json), r.path).toEqual(r.path.startsWith('/v1/') ? ['error'] : ['detail']);
        expect(res.headers.get('x-request-id')).toBeTruthy();
      }
      if (r.owned) {
        const res = await call(r.method, r.path, { key: other, body: r.body });
        expect(res.status, `other owner: ${r.method} ${r.path}`).toBe(r.owned === 'entity' ? 404 : 403);
      }
    }
    const otherUser = (await engine.accounts.find('acme')).userId;
    expect((await call('GET', `/api/mgpt/logs?ownerUserId=${otherUser}`)).status).toBe(403);
  });
});

describe('mgpt serve: bad input', () => {
  it('answers at least 200 malformed requests with a 4xx, never a 5xx, and keeps serving', async () => {
    const eid = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id;
    const uid = (await call('POST', '/api/mgpt/universes', { body: { storedPrompt: 'narrator' } })).json.universe;
    const bad: Array<{ method: string; path: string; raw?: string; body?: unknown; headers?: Record<string, string> }> = [];
    const garbage = ['{', '[]', 'null', '"x"', '42', '{"a":', '\u0000', 'true', '{}}', 'NaN'];
    const routes = ['/v1/entities', `/v1/entities/${eid}/messages`, '/api/mgpt/universes', '/api/mgpt/responses', '/api/mgpt/images', '/backend-api/mgpt/responses'];
    for (const path of routes) for (const raw of garbage) bad.push({ method: 'POST', path, raw });
    for (const path of routes) bad.push({ method: 'POST', path, raw: '{}', headers: { 'content-type': 'text/plain' } });
    for (const path of routes) bad.push({ method: 'POST', path, raw: JSON.stringify({ x: 'y'.repeat(2 * 1024 * 1024) }) });
    const wrongTypes = [1, -1, 0, 1.5, true, null, [], {}, 'x'.repeat(300), ''];
    for (const v of wrongTypes) {
      bad.push({ method: 'POST', path: '/v1/entities', body: { model: v } });
      bad.push({ method: 'POST', path: '/v1/entities', body: { model: 'mgpt-1-27b', name: typeof v === 'string' ? 'n'.repeat(201) : v } });
      // Where a string would be valid, use one that is not: over the window budget, missing, or empty.
      bad.push({ method: 'POST', path: `/v1/entities/${eid}/messages`, body: { content: typeof v === 'string' && v ? 'word '.repeat(40_000) : v } });
      bad.push({ method: 'POST', path: `/v1/entities/${eid}/messages`, body: { content: 'x', stream: v === true ? 'yes' : v } });
      bad.push({ method: 'POST', path: `/v1/entities/${eid}/messages`, body: { content: 'x', idempotency_key: typeof v === 'string' ? 'k'.repeat(201) : v } });
      bad.push({ method: 'POST', path: '/api/mgpt/universes', body: { storedPrompt: v } });
      bad.push({ method: 'POST', path: '/api/mgpt/responses', body: { model: v, userInput: 'x' } });
      bad.push({ method: 'POST', path: '/api/mgpt/responses', body: { model: 'game-1-lite-frozen', userInput: typeof v === 'string' && v ? undefined : v } });
      bad.push({ method: 'POST', path: '/api/mgpt/responses', body: { model: 'game-1-lite-frozen', userInput: 'x', universe: uid, statePointer: v === 0 ? -5 : v } });
      bad.push({ method: 'POST', path: '/api/mgpt/responses', body: { model: 'game-1-lite-frozen', userInput: 'x', universe: typeof v === 'string' ? `${v}-not-uuid` : v } });
      bad.push({ method: 'POST', path: '/api/mgpt/images', body: { sceneUid: typeof v === 'string' ? '' : v, systemPrompt: 'x', description: 'y' } });
      bad.push({ method: 'POST', path: '/api/mgpt/images', body: { sceneUid: 's', systemPrompt: 'x', description: 'y', imageConfig: { imageSize: v } } });
    }
    for (const q of ['limit=0', 'limit=501', 'limit=-1', 'limit=abc', 'after=-1', 'after=1.5', 'after=x', 'limit=1e3']) {
      bad.push({ method: 'GET', path: `/v1/entities/${eid}/messages?${q}` });
    }
    for (const q of ['page=0', 'page=-1', 'pageSize=0', 'pageSize=101', 'page=x', 'kind=video', 'page=1.5']) {
      bad.push({ method: 'GET', path: `/api/mgpt/logs?ownerUserId=${localUser}&${q}` });
    }
    bad.push({ method: 'GET', path: '/api/mgpt/logs' });
    for (const id of ['x', '../etc', '00000000-0000-0000-0000-000000000000', '%00']) {
      bad.push({ method: 'GET', path: `/v1/entities/${id}` });
      bad.push({ method: 'POST', path: '/api/mgpt/responses', body: { model: 'game-1-lite-frozen', universe: id, userInput: 'x' } });
    }
    const extra = [
      { model: 'game-1-lite-frozen', userInput: 'x', universe: uid, universeDoc: { conversation: [], runtime: { conversation: [] } } },
      { model: 'game-1-lite-frozen', userInput: 'x', modelOverride: 'vendor/x' },
      { model: 'unknown-alias', userInput: 'x' },
      { model: 'game-1-lite-frozen', userInput: 'x', userId: localUser },
      { model: 'game-1-lite-frozen', userInput: 'x', usageForward: { usd: 1 } },
      { model: 'game-1-lite-frozen', userInput: 'x', toolResults: [{ callId: 'nope', name: 'x', output: {}, ok: true }], universe: uid },
      { model: 'game-1-lite-frozen', userInput: 'x', tools: 'all' },
      { model: 'game-1-lite-frozen', userInput: 'x', universeDoc: { runtime: {} } },
    ];
    for (const body of extra) bad.push({ method: 'POST', path: '/api/mgpt/responses', body });
    bad.push({ method: 'POST', path: '/api/mgpt/universes', body: { storedPrompt: 'narrator', userId: localUser } });
    bad.push({ method: 'POST', path: '/v1/entities', body: { model: 'mgpt-1-27b', surprise: 1 } });
    bad.push({ method: 'PUT', path: '/v1/entities' });
    bad.push({ method: 'GET', path: '/nowhere' });

    expect(bad.length).toBeGreaterThanOrEqual(200);
    const statuses: Record<number, number> = {};
    for (const b of bad) {
      const res = await call(b.method, b.path, { raw: b.raw, body: b.body, headers: b.headers });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      expect(res.status, `${b.method} ${b.path} ${String(b.raw ?? JSON.stringify(b.body)).slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${b.method} ${b.path} ${String(b.raw ?? JSON.stringify(b.body)).slice(0, 80)}`).toBeLessThan(500);
    }
    expect(statuses[413]).toBeGreaterThanOrEqual(6);
    const alive = await call('GET', '/v1/entities');
    expect(alive.status).toBe(200);
  });
});

describe('request bodies', () => {
  it('answers a chunked body over the limit with 413 on a live connection, and keeps serving', async () => {
    const url = new URL(`${server.url}/v1/entities`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      // 2 MiB in 64 KiB chunks, no Content-Length: the limit (1 MiB) can only be found by reading.
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (let i = 0; i < 32; i++) req.write(chunk);
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: 'request body over 1048576 bytes' });
    const ok = await fetch(`${server.url}/v1/entities`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model":"mgpt-1-27b"}' });
    expect(ok.status).toBe(201);
  });
});

describe('mgpt serve: search and rate limits', () => {
  it("counts a search against its key's rpm: over it, 429 with OpenAI's headers, on both search routes", async () => {
    const limited = (await engine.keys.create('local', ['mgpt.responses:create'], { rpm: 2 })).key!;
    const id = (await call('POST', '/v1/entities', { body: { model: 'mgpt-1-27b' } })).json.id as string;
    const first = await call('GET', '/v1/search?q=harbour', { key: limited });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await call('GET', `/v1/entities/${id}/search?q=harbour`, { key: limited })).status).toBe(200);
    for (const path of ['/v1/search?q=harbour', `/v1/entities/${id}/search?q=harbour`]) {
      const refused = await call('GET', path, { key: limited });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json.error).toMatch(/^rate limit reached for requests per minute \(rpm\): limit 2, remaining 0/);
    }
    // Reading what is not a search is not limited.
    expect((await call('GET', '/v1/entities', { key: limited })).status).toBe(200);
  });
});
