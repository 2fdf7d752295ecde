import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { openEngine } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startPostgres } from '../helpers/postgres.js';

/**
 * The Responses and Conversations rows on PostgreSQL (the store replicas share): a chain, a
 * branch, an open tool round, conversation items, and the rows going with their entity.
 */
// Where PostgreSQL cannot start here, startPostgres() prints a banner saying these did not run and
// they skip; under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead.
const cluster = await startPostgres('the Responses API on PostgreSQL');
if (!cluster) it.skip('the Responses API on PostgreSQL: PostgreSQL could not be started here (see the banner)', () => {});

describe.skipIf(!cluster)('Responses on PostgreSQL', () => {
  let fake: FakeOpenAI;
  let engine: Engine;
  let server: Listening;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    engine = await openEngine({ db: cluster!.createDatabase('responses'), poolSize: 3, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }) });
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    server = await listen(engine, '127.0.0.1', 0);
    client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await engine?.close();
    await fake?.close();
    cluster!.stop();
  });

  it('continues, branches, answers a tool round, keeps conversation items, and drops the rows with their entity', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'pg' }, 'local');
    const a = await client.responses.create({ model: 'entity:pg', input: 'one' });
    const b = await client.responses.create({ model: 'entity:pg', input: 'two', previous_response_id: a.id });
    expect(await client.responses.retrieve(b.id)).toEqual(b);
    const branch = await client.responses.create({ model: 'entity:pg', input: 'other', previous_response_id: a.id }).withResponse();
    expect(branch.response.headers.get('mgpt-turn')).toBe('branched');

    fake.script({ toolCalls: [{ id: 'call_p', name: 'f', arguments: '{}' }] }, { text: 'done' });
    const tools = [{ type: 'function' as const, name: 'f', parameters: { type: 'object', properties: {} }, strict: false }];
    const call = await client.responses.create({ model: 'entity:pg', input: 'call f', previous_response_id: b.id, tools });
    const done = await client.responses.create({ model: 'entity:pg', previous_response_id: call.id, tools, input: [{ type: 'function_call_output', call_id: 'call_p', output: 'ok' }] });
    expect(done.output_text).toBe('done');
    expect((await engine.entities.messages(e.id, {}, 'local')).data.map((m) => m.content)).toEqual(['one', 'reply: one', 'two', 'reply: two', 'call f', 'done']);

    const conv = await client.conversations.create({ metadata: { db: 'pg' }, items: [{ type: 'message', role: 'user', content: 'x' }] });
    expect((await client.conversations.items.list(conv.id)).data).toEqual([expect.objectContaining({ status: 'in_progress' })]);
    expect((await client.responses.create({ model: 'mgpt-1-27b', conversation: conv.id })).output_text).toBe('reply: x');
    expect((await client.conversations.retrieve(conv.id)).metadata).toEqual({ db: 'pg' });

    await engine.entities.delete(e.id, 'local');
    await expect(client.responses.retrieve(b.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  }, 60_000);
});
