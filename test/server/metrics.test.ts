import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// A maintained Prometheus text parser (not our own regex): what a scraper would read.
import parsePrometheus, { type PromFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { openEngine } from '../../src/engine/open-engine.js';
import { makeEngine } from '../helpers/engine.js';
import { startPostgres } from '../helpers/postgres.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-metrics-');
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'), { recursive: true });
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.\n');
  engine = makeEngine(dir, { fake, promptsDir: join(dir, 'prompts'), windowBudget: 200 });
  key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.logs:read'])).key!;
  server = await listen(engine, '127.0.0.1', 0, { metricsEndpoint: true });
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

async function scrape(url = server.url): Promise<Map<string, PromFamily>> {
  const res = await fetch(`${url}/metrics`);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Map(parsePrometheus(await res.text()).map((f) => [f.name, f]));
}

/** A counter's value for the labels given (0 when it has none yet). */
function value(m: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number {
  const hit = m.get(name)?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return Number(hit?.value ?? hit?.count ?? 0);
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('GET /metrics', () => {
  it('needs no key, names no account, key or entity, and its counters match a scripted run and the logs table', async () => {
    fake.fallback = echoLastUser;
    const id = (await (await post('/v1/entities', { model: 'mgpt-1-27b' })).json()).id;
    for (let i = 0; i < 12; i++) await (await post(`/v1/entities/${id}/messages`, { content: `turn ${i}: a few words about the harbour and the weather`, stream: i % 2 === 0 })).text();
    const universe = (await (await post('/api/mgpt/universes', { storedPrompt: 'narrator' })).json()).universe;
    for (let i = 0; i < 3; i++) expect((await post('/api/mgpt/responses', { model: 'game-1-lite-frozen', universe, userInput: `hello ${i}` })).status).toBe(200);
    expect((await post('/v1/chat/completions', { model: 'game-1-lite-frozen', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    fake.script({ status: 500 });
    expect((await post('/api/mgpt/responses', { model: 'game-1-lite-frozen', universe, userInput: 'fails' })).status).toBe(502);
    // A second message while one is answered: 409.
    let release!: () => void;
    fake.script({ text: ['slow ', 'reply'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
    const slow = post(`/v1/entities/${id}/messages`, { content: 'slow one', stream: false });
    await new Promise((r) => setTimeout(r, 100));
    expect((await post(`/v1/entities/${id}/messages`, { content: 'too soon', stream: false })).status).toBe(409);
    release();
    await (await slow).text();

    const m = await scrape();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).not.toContain(id);
    expect(text).not.toContain(universe);
    expect(text).not.toContain('local');
    expect(value(m, 'mgpt_turns_total', { kind: 'entity' })).toBe(13);
    expect(value(m, 'mgpt_http_requests_total', { route: '/v1/entities/:id/messages', status: '200' })).toBe(13);
    expect(value(m, 'mgpt_http_requests_total', { route: '/v1/entities/:id/messages', status: '409' })).toBe(1);
    expect(value(m, 'mgpt_lease_conflicts_total')).toBe(1);
    expect(value(m, 'mgpt_provider_errors_total', { class: 'http_5xx' })).toBe(1);
    expect(value(m, 'mgpt_rotations_total')).toBeGreaterThan(0);
    expect(value(m, 'mgpt_summary_requests_total')).toBeGreaterThanOrEqual(value(m, 'mgpt_rotations_total'));
    // Every generation: 13 entity turns, 3 universe turns, 1 completion.
    expect(value(m, 'mgpt_turn_duration_seconds')).toBe(17);
    expect(value(m, 'mgpt_first_token_seconds')).toBe(17);
    expect(m.get('mgpt_turn_duration_seconds')!.type).toBe('HISTOGRAM');
    expect(value(m, 'mgpt_streams_in_flight')).toBe(0);
    // What the logs table holds: the universe turns and the stateless completion, each once.
    const logs = (await engine.logs.list({ pageSize: 100 }, (await engine.accounts.find('local')).userId)).data;
    const ok = logs.filter((l) => l.status !== 'error');
    expect(value(m, 'mgpt_turns_total', { kind: 'universe' })).toBe(ok.filter((l) => l.universeId === universe).length);
    expect(value(m, 'mgpt_turns_total', { kind: 'facade' })).toBe(ok.filter((l) => l.facade === 'stateless').length);
    expect(logs.filter((l) => l.status === 'error')).toHaveLength(value(m, 'mgpt_provider_errors_total', { class: 'http_5xx' }));
    // What the universe turns and the completion were billed (entity turns log their billed message now too).
    const prompted = ok.filter((l) => l.universeId === universe || l.facade === 'stateless').reduce((n, l) => n + l.inputTokens, 0);
    const entityPrompts = value(m, 'mgpt_prompt_tokens_total', { cached: 'false' }) + value(m, 'mgpt_prompt_tokens_total', { cached: 'true' });
    expect(entityPrompts).toBeGreaterThan(prompted);
  });

  it('counts the messages semantic recall embedded, and those the provider failed to embed', async () => {
    const embedding = makeEngine(dir, { route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0, embeddings: { model: 'fake-embed' } }) });
    const listening = await listen(embedding, '127.0.0.1', 0, { metricsEndpoint: true });
    try {
      fake.embed = (text) => [text.length, 1];
      const e = await embedding.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
      for await (const _ of embedding.entities.send(e.id, { content: 'hello there' }, 'local'));
      await embedding.deps.semantic.drain();
      let m = await scrape(listening.url);
      expect(value(m, 'mgpt_embeddings_total', { outcome: 'stored' })).toBe(2);
      expect(value(m, 'mgpt_embeddings_total', { outcome: 'failed' })).toBe(0);
      fake.embed = undefined;
      for await (const _ of embedding.entities.send(e.id, { content: 'and again' }, 'local'));
      await embedding.deps.semantic.drain();
      m = await scrape(listening.url);
      expect(value(m, 'mgpt_embeddings_total', { outcome: 'stored' })).toBe(2);
      expect(value(m, 'mgpt_embeddings_total', { outcome: 'failed' })).toBe(2);
    } finally {
      fake.embed = undefined;
      await listening.close();
      await embedding.close();
    }
  });

  it('is off with metricsEndpoint false (mgpt serve --no-metrics): 404', async () => {
    const quiet = await listen(engine, '127.0.0.1', 0);
    try {
      expect((await fetch(`${quiet.url}/metrics`)).status).toBe(404);
    } finally {
      await quiet.close();
    }
  });
});

// On PostgreSQL the scrape also reports this process's pool. Where PostgreSQL is not installed,
// startPostgres() prints a banner saying this did not run; under CI (MGPT_TEST_REQUIRE_POSTGRES,
// which .ci/run sets) it throws instead, so CI always runs it.
const cluster = await startPostgres('the /metrics pool gauge on PostgreSQL');
afterAll(() => cluster?.stop());

// Skipped only where PostgreSQL cannot start (see startPostgres above); CI throws instead.
describe.skipIf(!cluster)('GET /metrics on PostgreSQL', () => {
  it('reports the pool: connections in use and requests waiting for one', async () => {
    const pg = await openEngine({ db: await cluster!.createDatabase('metrics'), poolSize: 3 });
    const s = await listen(pg, '127.0.0.1', 0, { metricsEndpoint: true });
    try {
      const m = await scrape(s.url);
      expect(m.get('mgpt_db_pool_clients')?.metrics.map((x) => x.labels?.state).sort()).toEqual(['in_use', 'waiting']);
      expect(value(m, 'mgpt_db_pool_clients', { state: 'waiting' })).toBe(0);
      expect(value(m, 'mgpt_db_pool_clients', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
      expect(value(m, 'mgpt_db_pool_clients', { state: 'in_use' })).toBeLessThanOrEqual(3);
    } finally {
      await s.close();
      await pg.close();
    }
  });
});
