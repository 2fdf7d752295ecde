import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Engine } from '../../src/engine/engine.js';
import type { Listening } from '../../src/server/listen.js';
import { promptsIn, replica } from '../contract/harness.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { call, httpClient, text } from '../helpers/mcp.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// MCP on two `mgpt serve` replicas of one PostgreSQL database: /mcp keeps no session, so what a
// client writes through one replica is what another client reads through the other.
const cluster = await startPostgres('MCP across PostgreSQL replicas');
afterAll(() => cluster?.stop());
const dir = tempDir('mgpt-mcp-replicas-');

// Skipped only where no PostgreSQL server can be started here: startPostgres() prints a banner saying
// so, and under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead, so CI always runs it.
describe.skipIf(!cluster)('MCP on two replicas of one PostgreSQL database', () => {
  let fake: FakeOpenAI;
  let a: { engine: Engine; server: Listening };
  let b: { engine: Engine; server: Listening };
  let ca: Client;
  let cb: Client;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const prompts = promptsIn(dir);
    a = await replica(cluster!.url, fake, prompts);
    b = await replica(cluster!.url, fake, prompts);
    const key = (await a.engine.keys.create('local', ['mgpt.responses:create'])).key!;
    await a.engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
    ca = await httpClient(`${a.server.url}/mcp`, key);
    cb = await httpClient(`${b.server.url}/mcp`, key);
  });
  afterAll(async () => {
    await ca?.close();
    await cb?.close();
    for (const r of [a, b]) {
      await r?.server.close();
      await r?.engine.close();
    }
    await fake?.close();
  });

  it('an exchange appended through one replica is recalled, searched and read through the other', async () => {
    expect(text(await call(ca, 'append', { entity: 'ada', content: 'The spare key is under the blue flowerpot.', reply: 'Noted.' }))).toBe('recorded in ada as messages #1 and #2');
    expect(text(await call(cb, 'recall', { entity: 'ada', query: 'where is the spare key' }))).toMatch(/^#1 user \(.*\): The spare key is under the blue flowerpot\.$/m);
    expect(text(await call(cb, 'search', { query: 'flowerpot' }))).toMatch(/^ada #1 user .*flowerpot/m);
    expect(text(await call(cb, 'read_window', { entity: 'ada' }))).toContain('#2 assistant: Noted.');
  });

  it('a memory block written through one replica is viewed and edited through the other', async () => {
    expect((await call(ca, 'memory', { command: 'create', path: '/memories/ada/home', file_text: 'Lisbon' })).isError).toBeFalsy();
    expect(text(await call(cb, 'memory', { command: 'view', path: '/memories/ada/home' }))).toContain('     1\tLisbon');
    expect((await call(cb, 'memory', { command: 'str_replace', path: '/memories/ada/home', old_str: 'Lisbon', new_str: 'Porto' })).isError).toBeFalsy();
    expect(text(await call(ca, 'memory', { command: 'view', path: '/memories/ada/home' }))).toContain('     1\tPorto');
  });

  it('appends through both replicas at once keep the transcript whole and alternating', async () => {
    const id = (await a.engine.entities.resolve('ada', 'local')).id;
    const before = (await a.engine.entities.get(id, 'local')).transcript.messages;
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i % 2 ? ca : cb, 'append', { entity: 'ada', content: `note ${i}`, reply: `ok ${i}` })));
    const stored = results.filter((r) => !r.isError).length;
    for (const r of results.filter((x) => x.isError)) expect(r.structuredContent.error).toMatchObject({ code: 'busy', status: 409 });
    expect(stored).toBeGreaterThan(0);
    const messages = (await b.engine.entities.messages(id, { limit: 100 }, 'local')).data;
    expect(messages.length).toBe(before + 2 * stored);
    messages.forEach((m, i) => expect(m.role).toBe(i % 2 ? 'assistant' : 'user'));
  });
});
