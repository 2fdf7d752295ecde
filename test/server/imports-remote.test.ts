import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/core/backend.js';
import { type ContractTarget, remoteTarget, replicasTarget } from '../contract/harness.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { ALL, FIXTURES, transcripts } from '../engine/imports/expected.js';

// The same fixtures through `mgpt serve` (POST /v1/imports, which the remote backend calls): the
// same transcripts as the local engine makes, on SQLite and on two replicas of one PostgreSQL.
const cluster = await startPostgres('importing chat exports through two replicas on PostgreSQL');
afterAll(() => cluster?.stop());

async function importsAll(backend: Backend): Promise<void> {
  for (const x of ALL) {
    const res = await backend.importChats(join(FIXTURES, x.file), {});
    expect(res.source).toBe(x.source);
    expect(res.conversations.map((c) => c.outcome)).toEqual(x.outcomes);
  }
}

const expectedAll = () => Object.assign({}, ...ALL.map((x) => x.entities));

describe('imports through mgpt serve (SQLite)', () => {
  let fake: FakeOpenAI;
  let target: ContractTarget & { server: { url: string } };
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    target = await remoteTarget(tempDir('mgpt-imports-remote-'), fake);
  });
  afterAll(async () => {
    await target?.close();
    await fake?.close();
  });

  it('gives the transcripts the local engine gives; a second run imports nothing; a truncated file changes nothing', async () => {
    await importsAll(target.backend);
    expect(await transcripts(target.backend)).toEqual(expectedAll());
    for (const x of ALL) expect((await target.backend.importChats(join(FIXTURES, x.file), {})).totals.imported).toBe(0);
    const size = readFileSync(join(FIXTURES, 'claude-truncated.json')).length;
    await expect(target.backend.importChats(join(FIXTURES, 'claude-truncated.json'), {})).rejects.toThrow(`truncated (at byte ${size})`);
    expect(await transcripts(target.backend)).toEqual(expectedAll());
  });

  it('takes a multipart form with the options as fields, and refuses an unknown option', async () => {
    const key = (await target.engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(FIXTURES, 'chatgpt-export.zip'))]), 'chatgpt-export.zip');
    form.append('dry_run', 'true');
    const res = await fetch(`${target.server.url}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.dry_run).toBe(true);
    expect(body.source).toBe('chatgpt');
    const bad = await fetch(`${target.server.url}/v1/imports?into_entity=x`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '[]' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/unknown import option "into_entity"/);
    // The engine checks --since for both backends: a time without a zone is a 400 here too.
    const zoneless = await fetch(`${target.server.url}/v1/imports?since=2024-04-03T00:00:00`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '[]' });
    expect(zoneless.status).toBe(400);
    expect((await zoneless.json()).error).toMatch(/is not a date with a zone/);
  });
  it('a client that goes away during --summarize stops the import after the conversation in progress', async () => {
    const filler = 'We went through the rest of it slowly, one point after another, and agreed to come back to it later on. Then we talked about the weather and the long drive home.';
    const conv = (id: string) => ({
      uuid: id, name: id, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T12:00:00Z',
      chat_messages: Array.from({ length: 12 }, (_, i) => ({ uuid: `${id}${i}`, sender: i % 2 ? 'assistant' : 'human', text: `${i}: ${filler}`, created_at: new Date(Date.UTC(2024, 0, 1, i)).toISOString() })),
    });
    const file = join(tempDir('mgpt-imports-cancel-'), 'cancel.json');
    writeFileSync(file, JSON.stringify([conv('gone-first'), conv('gone-second'), conv('gone-third')]));
    const abort = new AbortController();
    const before = fake.requests.length;
    const saved = fake.fallback;
    // The second conversation's summary is where the client goes away; the reply would come later.
    fake.fallback = (body) => {
      if (fake.requests.length - before > 1 && !abort.signal.aborted) abort.abort();
      return { ...echoLastUser(body), delayMs: fake.requests.length - before > 1 ? 1500 : 0 };
    };
    try {
      await expect(target.backend.importChats(file, { summarize: true }, undefined, abort.signal)).rejects.toThrow();
      // Long enough for the held reply to have come and a third conversation to have started, had the server gone on.
      await new Promise((r) => setTimeout(r, 3000));
      const names = Object.keys(await transcripts(target.backend)).filter((n) => n.startsWith('gone-'));
      expect(names).toEqual(['gone-first']);
      expect(fake.requests.length - before).toBe(2);
    } finally {
      fake.fallback = saved;
    }
  });

  it('refuses a multipart form sent without a Content-Length (chunked): its size cap could not hold', async () => {
    const key = (await target.engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(FIXTURES, 'chatgpt-export.zip'))]), 'chatgpt-export.zip');
    form.append('dry_run', 'true');
    const encoded = new Response(form);
    const type = encoded.headers.get('content-type')!;
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    // A stream body goes out chunked: no Content-Length header.
    const body = new ReadableStream({ start: (c) => (c.enqueue(bytes), c.close()) });
    const res = await fetch(`${target.server.url}/v1/imports`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body, duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(400);
    const err = await res.json();
    expect(err.error).toMatch(/Content-Length/);
    expect(JSON.stringify(err)).toMatch(/raw body/);
  });
});

// Skipped only where no PostgreSQL server can be started here: startPostgres() prints a banner saying
// so, and under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead, so CI always runs it.
describe.skipIf(!cluster)('imports through two mgpt serve replicas on one PostgreSQL database', () => {
  let fake: FakeOpenAI;
  let target: ContractTarget;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    target = await replicasTarget(tempDir('mgpt-imports-pg-'), fake, cluster!.url);
  });
  afterAll(async () => {
    await target?.close();
    await fake?.close();
  });

  it('the replicas agree: the same transcripts whichever answers, and a re-run on the other imports nothing', async () => {
    await importsAll(target.backend);
    // Requests alternate between the replicas: every read below lands on both in turn.
    expect(await transcripts(target.backend)).toEqual(expectedAll());
    expect(await transcripts(target.backend)).toEqual(expectedAll());
    for (const x of ALL) expect((await target.backend.importChats(join(FIXTURES, x.file), {})).totals.imported).toBe(0);
    const zip = await target.backend.importChats(join(FIXTURES, 'chatgpt-export.zip'), { dryRun: true });
    expect(zip.conversations.map((c) => c.outcome)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(Object.keys(await transcripts(target.backend)).sort()).toEqual(Object.keys(expectedAll()).sort());
  });
});
