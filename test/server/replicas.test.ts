import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { Listening } from '../../src/server/listen.js';
import { promptsIn, replica } from '../contract/harness.js';
import { cliEnv, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// The guarantees across replicas: two engines (two pools, two listeners) on one PostgreSQL
// database, real HTTP on loopback, and a real `mgpt serve` process where being killed matters.
const cluster = await startPostgres('the cross-replica guarantees on PostgreSQL');
afterAll(() => cluster?.stop());
const dir = tempDir('mgpt-replicas-');

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

// Where PostgreSQL cannot start here (not installed), startPostgres() has printed a banner saying
// these did not run; under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead.
// Skipped only where no PostgreSQL server can be started here: startPostgres() prints a banner saying
// so, and under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead, so CI always runs it.
describe.skipIf(!cluster)('two mgpt serve replicas on one PostgreSQL database', () => {
  let fake: FakeOpenAI;
  let a: { engine: Engine; server: Listening };
  let b: { engine: Engine; server: Listening };
  let key: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // Replicas share the prompts directory (universes snapshot a prompt at creation).
    const prompts = promptsIn(dir);
    a = await replica(cluster!.url, fake, prompts);
    b = await replica(cluster!.url, fake, prompts);
    key = (await a.engine.keys.create('local', ['mgpt.responses:create', 'mgpt.logs:read'])).key!;
  });
  afterAll(async () => {
    for (const r of [a, b]) {
      await r?.server.close();
      await r?.engine.close();
    }
    await fake?.close();
  });

  const call = async (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, bearer = key): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  const entity = async () => (await call(a.server.url, 'POST', '/v1/entities', { model: 'mgpt-1-27b' })).body.id as string;
  const send = (r: { server: Listening }, id: string, content: string, headers: Record<string, string> = {}) =>
    call(r.server.url, 'POST', `/v1/entities/${id}/messages`, { content, stream: false }, headers);
  const transcript = async (id: string) =>
    ((await call(b.server.url, 'GET', `/v1/entities/${id}/messages?limit=100`)).body.data as { role: string; content: string }[]).map((m) => `${m.role}: ${m.content}`);
  /** Resolves once the provider has been asked `n` questions in all. */
  const providerAsked = async (n: number) => {
    while (fake.requests.length < n) await new Promise((r) => setTimeout(r, 10));
  };

  it('concurrent sends to one entity through both replicas: one 200, one 409, and the transcript is whole', async () => {
    const id = await entity();
    fake.script({ text: ['slow', ' answer'], chunkDelayMs: 200 });
    const asked = fake.requests.length;
    const first = send(a, id, 'through a');
    await providerAsked(asked + 1);
    const second = await send(b, id, 'through b');
    expect(second.status).toBe(409);
    expect(second.body.error).toMatch(/answering another message/);
    expect((await first).status).toBe(200);
    expect(await transcript(id)).toEqual(['user: through a', 'assistant: slow answer']);
    // Both replicas then agree on the entity.
    const [ga, gb] = await Promise.all([call(a.server.url, 'GET', `/v1/entities/${id}`), call(b.server.url, 'GET', `/v1/entities/${id}`)]);
    expect(ga.body).toEqual(gb.body);
    expect(ga.body.transcript.messages).toBe(2);
  });

  it('the same Idempotency-Key through both replicas: 409 while in flight, then the stored reply again', async () => {
    const id = await entity();
    fake.script({ text: ['once', ' only'], chunkDelayMs: 200 });
    const asked = fake.requests.length;
    const first = send(a, id, 'pay once', { 'idempotency-key': 'k-cross-1' });
    await providerAsked(asked + 1);
    const during = await send(b, id, 'pay once', { 'idempotency-key': 'k-cross-1' });
    expect(during.status).toBe(409);
    const done = await first;
    expect(done.status).toBe(200);
    const again = await send(b, id, 'pay once', { 'idempotency-key': 'k-cross-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(done.body);
    expect(fake.requests.length).toBe(asked + 1);
    expect(await transcript(id)).toEqual(['user: pay once', 'assistant: once only']);
    // The same key with other content is refused on either replica.
    expect((await send(a, id, 'something else', { 'idempotency-key': 'k-cross-1' })).status).toBe(400);
  });

  it('a key revoked through one replica (or by `mgpt keys revoke --db URL`) is refused by the other at once', async () => {
    const k1 = await a.engine.keys.create('local', ['mgpt.responses:create']);
    const k2 = await a.engine.keys.create('local', ['mgpt.responses:create']);
    for (const k of [k1, k2]) expect((await call(b.server.url, 'GET', '/v1/entities', undefined, {}, k.key!)).status).toBe(200);
    await a.engine.keys.revoke(k1.id);
    const r1 = await call(b.server.url, 'GET', '/v1/entities', undefined, {}, k1.key!);
    expect(r1.status).toBe(401);
    expect(r1.body.error).toMatch(/revoked/);
    const cli = await mgptBinary(['keys', 'revoke', k2.id, '--db', cluster!.url], cliEnv(`${dir}/cli`));
    expect(cli.code).toBe(0);
    for (const r of [a, b]) expect((await call(r.server.url, 'GET', '/v1/entities', undefined, {}, k2.key!)).status).toBe(401);
  });

  it('universe turns under the same rule: one 200 and one 409 across replicas, and the conversation is whole', async () => {
    const u = (await call(a.server.url, 'POST', '/api/mgpt/universes', { storedPrompt: 'narrator' })).body.universe as string;
    fake.script({ text: ['the', ' tale'], chunkDelayMs: 200 });
    const asked = fake.requests.length;
    const first = call(a.server.url, 'POST', '/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: u, userInput: 'begin', requestId: 'r-1' });
    await providerAsked(asked + 1);
    const second = await call(b.server.url, 'POST', '/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: u, userInput: 'interrupt', requestId: 'r-2' });
    expect(second.status).toBe(409);
    expect((await first).status).toBe(200);
    // The same requestId through the other replica is the stored answer, not a second turn.
    const replay = await call(b.server.url, 'POST', '/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: u, userInput: 'begin', requestId: 'r-1' });
    expect(replay.status).toBe(200);
    expect(fake.requests.length).toBe(asked + 1);
    const doc = await a.engine.universes.doc(u);
    expect(doc.runtime.conversation.map((m) => m.content)).toEqual(['begin', 'the tale']);
  });

  it('SIGTERM drains a turn in flight on a serve process, then the pool closes and the process exits 0', async () => {
    const id = await entity();
    const env = cliEnv(`${dir}/drained`, { MGPT_DB: cluster!.url, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const server = spawnMgpt(['serve', '--port', '0'], env);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    fake.script({ text: ['finished', ' anyway'], chunkDelayMs: 300 });
    const asked = fake.requests.length;
    const turn = fetch(`${url}/v1/entities/${id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'drain me', stream: false }),
    });
    await providerAsked(asked + 1);
    server.kill('SIGTERM');
    const res = await turn;
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain('finished anyway');
    const r = await server.result;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('mgpt serve: stopped');
    expect(await transcript(id)).toEqual(['user: drain me', 'assistant: finished anyway']);
  });

  it('a replica killed mid-turn leaves no trace, and its lease expires so the other replica can take the turn', async () => {
    const id = await entity();
    const env = cliEnv(`${dir}/killed`, {
      MGPT_DB: cluster!.url,
      MGPT_LEASE_TTL_MS: '1500',
      MGPT_PROVIDER: 'openai',
      MGPT_PROVIDER_URL: fake.url,
      MGPT_PROVIDER_MODEL: 'fake-model',
    });
    const doomed = spawnMgpt(['serve', '--port', '0', '--pool-size', '2'], env);
    const url = await new Promise<string>((resolve) => doomed.stdout!.once('data', (d) => resolve(String(d).trim())));
    // The provider holds the answer long past the kill.
    fake.script({ text: 'never stored', delayMs: 5_000 });
    const asked = fake.requests.length;
    const turn = fetch(`${url}/v1/entities/${id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'dies with the replica', stream: false }),
    }).catch((err: unknown) => err);
    await providerAsked(asked + 1);
    doomed.kill('SIGKILL');
    expect((await doomed.result).signal).toBe('SIGKILL');
    expect(await turn).toBeInstanceOf(Error);

    // The dead replica's lease still holds the entity: the other one answers 409 until it expires.
    const blocked = await send(b, id, 'too soon');
    expect(blocked.status).toBe(409);
    let after: Answer;
    do {
      await new Promise((r) => setTimeout(r, 200));
      after = await send(b, id, 'after the crash');
    } while (after.status === 409);
    expect(after.status).toBe(200);
    expect(await transcript(id)).toEqual(['user: after the crash', 'assistant: reply: after the crash']);
    expect((await call(a.server.url, 'GET', `/v1/entities/${id}`)).body.transcript.messages).toBe(2);
  });

  afterAll(() => {
    if (fake) fake.fallback = echoLastUser;
  });
});
