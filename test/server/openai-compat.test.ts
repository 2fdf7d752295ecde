import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'), { recursive: true });
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.\n');
  engine = makeEngine(dir, { fake, promptsDir: join(dir, 'prompts') });
  key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  server = await listen(engine, '127.0.0.1', 0);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

type Msg = { role: 'user' | 'assistant' | 'system'; content: string };

async function transcript(id: string, account?: string): Promise<Msg[]> {
  return (await engine.entities.messages(id, { limit: 500 }, account ?? 'local')).data.map((m) => ({ role: m.role, content: m.content }));
}

async function streamed(model: string, messages: Msg[], headers: Record<string, string> = {}) {
  return streamedWith(client, model, messages, headers);
}

async function streamedWith(client: OpenAI, model: string, messages: Msg[], headers: Record<string, string> = {}) {
  const stream = await client.chat.completions.create(
    { model, messages, stream: true, stream_options: { include_usage: true } },
    { headers },
  );
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  let finish: string | null = null;
  for await (const ch of stream) {
    text += ch.choices[0]?.delta.content ?? '';
    finish = ch.choices[0]?.finish_reason ?? finish;
    if (ch.usage) usage = ch.usage;
  }
  return { text, usage, finish };
}

describe('OpenAI-compatible facade: /v1/models', () => {
  it('lists platform ids, aliases and each entity once (by its unique name, else by id), owned by the account', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'listed' }, 'local');
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'twin' }, 'local');
    // A create refuses a taken name; a rename still makes two of one name (docs/guide.md).
    const twin2 = await engine.entities.create({ model: 'mgpt-1-27b', name: 'twin-2' }, 'local');
    await engine.entities.update(twin2.id, { name: 'twin' }, 'local');
    const ids: string[] = [];
    const owners = new Map<string, string>();
    const account = (await engine.accounts.find('local')).id;
    for await (const m of client.models.list()) {
      ids.push(m.id);
      owners.set(m.id, m.owned_by);
    }
    expect(ids).toEqual(expect.arrayContaining(['mgpt-1-27b', 'game-1-lite-frozen', 'entity:listed', `entity:${twin2.id}`]));
    expect(ids).not.toContain('entity:twin');
    // Once each: a picker (Open WebUI's) shows every listed id, so the id of a named entity is not listed too.
    expect(ids).not.toContain(`entity:${e.id}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await client.models.retrieve(`entity:${e.id}`)).owned_by).toBe(account);
    expect(owners.get('entity:listed')).toBe(account);
    expect((await client.models.retrieve('entity:listed')).owned_by).toBe(account);
    expect((await client.models.retrieve(`entity:${e.id.slice(0, 8)}`)).id).toBe(`entity:${e.id.slice(0, 8)}`);
  });

  it('answers an unknown model with 404 in the OpenAI error shape, and a key without the scope with 403', async () => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'entity:nobody-here', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({ error: { message: expect.stringContaining('entity:nobody-here'), type: 'not_found_error', code: 'model_not_found', param: null } });
    await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404, error: { type: 'not_found_error' } });
    // A path or method the facade does not serve: 404 in OpenAI's shape too, as OpenAI answers it.
    for (const [method, path] of [['POST', '/v1/models'], ['DELETE', '/v1/models/mgpt-1-27b'], ['GET', '/v1/chat/completions'], ['GET', '/v1/chat']]) {
      const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(await r.json(), `${method} ${path}`).toEqual({ error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', code: null, param: null } });
    }

    const narrow = (await engine.keys.create('local', ['mgpt.logs:read'])).key!;
    const c2 = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: narrow, maxRetries: 0 });
    await expect(c2.models.list()).rejects.toMatchObject({ status: 403, error: { type: 'permission_error', message: expect.stringContaining('mgpt.responses:create') } });
    await expect(c2.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 403 });
    // The seed routes keep their shape.
    const seed = await fetch(`${server.url}/v1/entities/00000000-0000-0000-0000-000000000000`, { headers: { authorization: `Bearer ${key}` } });
    expect(await seed.json()).toEqual({ error: expect.any(String) });
  });
});

describe('OpenAI-compatible facade: entity turns', () => {
  it('streams and buffers by name, id and prefix; resent history is stored once', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'chatty', instructions: 'Be brief.' }, 'local');
    const history: Msg[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'one' }];
    const first = await streamed('entity:chatty', history);
    expect(first.text).toBe('reply: one');
    expect(first.finish).toBe('stop');
    expect(first.usage).toMatchObject({ completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    history.push({ role: 'assistant', content: first.text }, { role: 'user', content: 'two' });
    const second = await client.chat.completions.create({ model: `entity:${e.id}`, messages: history });
    expect(second.object).toBe('chat.completion');
    // A reply nobody watches arrive is asked of the provider in one piece; a streamed one streams.
    expect(fake.requests.at(-1)!.body.stream).toBe(false);
    expect(second.choices[0].message.content).toBe('reply: two');
    history.push({ role: 'assistant', content: 'reply: two' }, { role: 'user', content: 'three' });
    const third = await streamed(`entity:${e.id.slice(0, 6)}`, history);
    expect(third.text).toBe('reply: three');
    expect(await transcript(e.id)).toEqual([
      { role: 'user', content: 'one' }, { role: 'assistant', content: 'reply: one' },
      { role: 'user', content: 'two' }, { role: 'assistant', content: 'reply: two' },
      { role: 'user', content: 'three' }, { role: 'assistant', content: 'reply: three' },
    ]);
    // Billed: each new message once, never the resent history.
    const ledger = (await engine.store.accounts.ledger((await engine.accounts.find('local')).id)).filter((l) => l.entityId === e.id);
    expect(ledger.map((l) => l.inputTokens)).toEqual([1, 1, 1]);
    // The provider was shown the entity's window, not the client's list.
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('answers an edited history statelessly, a regenerate without storing, and branches on request (the edited chat keeps its branch)', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'forky' }, 'local');
    await streamed('entity:forky', [{ role: 'user', content: 'a' }]);
    await streamed('entity:forky', [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'reply: a' }, { role: 'user', content: 'b' }]);
    const edited: Msg[] = [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'reply: a' }, { role: 'user', content: 'B!' }, { role: 'assistant', content: 'reply: B!' }, { role: 'user', content: 'c' }];
    const plain = await client.chat.completions.create({ model: 'entity:forky', messages: edited }).withResponse();
    expect(plain.response.headers.get('mgpt-turn')).toBe('stateless');
    expect(plain.data.choices[0].message.content).toBe('reply: c');
    expect(fake.requests.at(-1)!.body.messages.map((m: Msg) => m.content)).toEqual(edited.map((m) => m.content));
    // A regenerate (the history without its last reply): answered again, the message not stored twice.
    const regen = await client.chat.completions.create({ model: 'entity:forky', messages: edited.slice(0, 3).map((m, i) => (i === 2 ? { role: 'user', content: 'b' } : m)) }).withResponse();
    expect(regen.response.headers.get('mgpt-turn')).toBe('regenerated');
    expect(regen.data.choices[0].message.content).toBe('reply: b');
    // Its prompt is the window without the turn it answers again.
    expect(fake.requests.at(-1)!.body.messages.map((m: Msg) => m.content)).toEqual(['a', 'reply: a', 'b']);
    expect(await transcript(e.id)).toHaveLength(4);

    const { data, response } = await client.chat.completions
      .create({ model: 'entity:forky', messages: edited }, { headers: { 'Mgpt-On-Conflict': 'branch' } })
      .withResponse();
    expect(data.choices[0].message.content).toBe('reply: c');
    expect(response.headers.get('mgpt-turn')).toBe('branched');
    const branchId = response.headers.get('x-entity-id')!;
    expect(branchId).not.toBe(e.id);
    expect(response.headers.get('mgpt-branched-from')).toBe(e.id);
    expect(await transcript(branchId)).toEqual([...edited, { role: 'assistant', content: 'reply: c' }]);
    const w = await engine.entities.window(branchId, 'local');
    expect(checkWindowInvariant(w.blocks, 6)).toBeNull();
    expect(await transcript(e.id)).toHaveLength(4);
    // The header sent on every request: the edited chat's next message continues the same branch.
    const count = async () => (await engine.entities.list('local')).data.length;
    const before = await count();
    const next = [...edited, { role: 'assistant' as const, content: 'reply: c' }, { role: 'user' as const, content: 'd' }];
    const cont = await client.chat.completions.create({ model: 'entity:forky', messages: next }, { headers: { 'Mgpt-On-Conflict': 'branch' } }).withResponse();
    expect(cont.response.headers.get('x-entity-id')).toBe(branchId);
    expect(await count()).toBe(before);
    expect(await transcript(branchId)).toHaveLength(8);

    // With an Idempotency-Key, a retry of the branching request replays on the same branch.
    const keyed = { headers: { 'Mgpt-On-Conflict': 'branch', 'Idempotency-Key': 'fork-1' } };
    const k1 = await client.chat.completions.create({ model: 'entity:forky', messages: edited }, keyed).withResponse();
    const entities = await count();
    const k2 = await client.chat.completions.create({ model: 'entity:forky', messages: edited }, keyed).withResponse();
    expect(k2.response.headers.get('x-entity-id')).toBe(k1.response.headers.get('x-entity-id'));
    expect(k2.response.headers.get('idempotent-replayed')).toBe('true');
    expect(k2.data.id).toBe(k1.data.id);
    expect(await count()).toBe(entities);
    expect(await transcript(k1.response.headers.get('x-entity-id')!)).toHaveLength(6);
  });

  it('stores a branch only with the turn that needed it: a 402 or a failed provider leaves no entity behind', async () => {
    const acct = await engine.accounts.create('brancher');
    const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: (await engine.keys.create('brancher', ['mgpt.responses:create'])).key!, maxRetries: 0 });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'twig' }, acct.id);
    await c.chat.completions.create({ model: 'entity:twig', messages: [{ role: 'user', content: 'a' }] });
    const forged: Msg[] = [{ role: 'user', content: 'forged' }, { role: 'assistant', content: 'history' }, { role: 'user', content: 'next '.repeat(40) }];
    const branch = { headers: { 'Mgpt-On-Conflict': 'branch' } };
    const count = async () => (await engine.entities.list(acct.id)).data.length;
    expect(await count()).toBe(1);

    // The provider fails before any text, then mid-stream: nothing stored, no branch.
    fake.script({ status: 502 });
    expect((await c.chat.completions.create({ model: 'entity:twig', messages: forged }, branch).catch((x) => x)).status).toBe(502);
    fake.script({ text: 'cut off mid reply', failAfterChunks: 1 });
    await expect(streamedWith(c, 'entity:twig', forged, branch.headers)).rejects.toThrow();
    expect(await count()).toBe(1);

    // An empty balance: 402 before the provider is asked, no branch.
    await engine.accounts.topup('brancher', 0.000001);
    const poor = await c.chat.completions.create({ model: 'entity:twig', messages: forged }, branch).catch((x) => x);
    expect(poor.status).toBe(402);
    expect(await count()).toBe(1);
    expect(await transcript(e.id, acct.id)).toHaveLength(2);

    // A whole turns' history is still required, and refused before anything is stored.
    const odd = await client.chat.completions
      .create({ model: 'entity:forky', messages: [{ role: 'user', content: 'x' }, { role: 'user', content: 'y' }] }, branch)
      .catch((x) => x);
    expect(odd.status).toBe(400);
  });

  it('replays a reply for its Idempotency-Key, storing nothing twice', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'idem' }, 'local');
    const body = { model: 'entity:idem', messages: [{ role: 'user' as const, content: 'once' }] };
    const a = await client.chat.completions.create(body, { headers: { 'Idempotency-Key': 'k-1' } });
    const { data: b, response } = await client.chat.completions.create(body, { headers: { 'Idempotency-Key': 'k-1' } }).withResponse();
    expect(b.id).toBe(a.id);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    const s = await streamed('entity:idem', body.messages, { 'Idempotency-Key': 'k-1' });
    expect(s.text).toBe('reply: once');
    expect(await transcript(e.id)).toHaveLength(2);
  });

  it('applies a client system message to that request only (400 with --strict-system), and 402 on an empty balance', async () => {
    const sys = await engine.entities.create({ model: 'mgpt-1-27b', name: 'sys', instructions: 'Stay calm.' }, 'local');
    const ok = await client.chat.completions.create({ model: 'entity:sys', messages: [{ role: 'system', content: 'Be loud.' }, { role: 'user', content: 'x' }] }).withResponse();
    expect(ok.response.headers.get('mgpt-turn')).toBe('stored');
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Stay calm.\n\nBe loud.' });
    expect(await transcript(sys.id)).toEqual([{ role: 'user', content: 'x' }, { role: 'assistant', content: 'reply: x' }]);
    expect((await engine.entities.get(sys.id, 'local')).instructions).toBe('Stay calm.');
    const strict = await listen(engine, '127.0.0.1', 0, { chatPolicy: { strictSystem: true } });
    try {
      const c = new OpenAI({ baseURL: `${strict.url}/v1`, apiKey: key, maxRetries: 0 });
      const err = await c.chat.completions.create({ model: 'entity:sys', messages: [{ role: 'system', content: 'Be loud.' }, { role: 'user', content: 'y' }] }).catch((x) => x);
      expect(err.status).toBe(400);
      expect(err.error.message).toContain('strict-system');
    } finally {
      await strict.close();
    }
    await engine.accounts.create('broke');
    const bk = (await engine.keys.create('broke', ['mgpt.responses:create'])).key!;
    await engine.accounts.topup('broke', 0.000001);
    const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: bk, maxRetries: 0 });
    const ent = await engine.entities.create({ model: 'mgpt-1-27b', name: 'poor' }, (await engine.accounts.find('broke')).id);
    const first = await c.chat.completions.create({ model: 'entity:poor', messages: [{ role: 'user', content: 'hello '.repeat(50) }] }).catch((x) => x);
    expect(first.status).toBe(402);
    expect(first.error).toMatchObject({ type: 'insufficient_quota', balanceUsd: expect.any(Number) });
    expect(await transcript(ent.id, (await engine.accounts.find('broke')).id)).toHaveLength(0);
  });

  it('rotates behind the facade: a small budget, many client turns, the window invariant holds', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'rotor' }, 'local');
    await engine.entities.update(e.id, { budget_tokens: 300 }, 'local');
    const history: Msg[] = [];
    for (let turn = 1; turn <= 25; turn++) {
      history.push({ role: 'user', content: `turn ${turn}: ${'words and more words '.repeat(4)}` });
      const r = turn % 2 ? await streamed('entity:rotor', history) : { text: (await client.chat.completions.create({ model: 'entity:rotor', messages: history })).choices[0].message.content! };
      history.push({ role: 'assistant', content: r.text });
      const w = await engine.entities.window(e.id, 'local');
      expect(checkWindowInvariant(w.blocks, history.length), `turn ${turn}`).toBeNull();
      expect(w.blocks.slice(0, -1).reduce((t, b) => t + b.tokens, 0), `turn ${turn}`).toBeLessThanOrEqual(300);
    }
    const w = await engine.entities.window(e.id, 'local');
    expect(w.blocks[0].kind).toBe('summary');
    expect(await transcript(e.id)).toEqual(history);
  });
});

describe('OpenAI-compatible facade: a client that stops a stream', () => {
  /** Streams a request and aborts once the first text has arrived; returns that text. */
  async function stopAfterFirst(model: string, messages: Msg[], stream = true): Promise<string> {
    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages, stream }),
      signal: abort.signal,
    });
    if (!stream) return '';
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    abort.abort();
    return JSON.parse(new TextDecoder().decode(value).split('\n')[0].replace(/^data: /, '')).choices[0].delta.content;
  }
  const settle = () => new Promise((r) => setTimeout(r, 400));

  it('keeps the turn as far as it streamed, as the client keeps it, and the chat goes on', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'stopper' }, 'local');
    fake.script({ text: ['Half ', 'of ', 'a ', 'long ', 'reply'], chunkDelayMs: 60 });
    const shown = await stopAfterFirst('entity:stopper', [{ role: 'user', content: 'go on' }]);
    await settle();
    // Stored as far as it was sent: at least what the client read, never the part not generated.
    const [said, kept] = await transcript(e.id);
    expect(said).toEqual({ role: 'user', content: 'go on' });
    expect(kept.content.startsWith(shown) && 'Half of a long reply'.startsWith(kept.content) && kept.content !== 'Half of a long reply').toBe(true);
    const next = await streamed('entity:stopper', [{ role: 'user', content: 'go on' }, { role: 'assistant', content: shown }, { role: 'user', content: 'and then' }]);
    expect(next.text).toBe('reply: and then');
    expect((await transcript(e.id)).map((m) => m.content)).toEqual(['go on', kept.content, 'and then', 'reply: and then']);
  });

  it('a request that does not stream, dropped by its client, leaves no trace', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'dropper' }, 'local');
    fake.script({ text: ['never ', 'seen'], delayMs: 200 });
    const abort = new AbortController();
    const res = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'entity:dropper', messages: [{ role: 'user', content: 'hello' }] }),
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(), 50);
    await expect(res).rejects.toThrow();
    await settle();
    expect(await transcript(e.id)).toEqual([]);
  });
});

describe('OpenAI-compatible facade: stateless and universe', () => {
  it('a platform id is a stateless completion: the whole list goes to the model, counted, billed and logged', async () => {
    const before = fake.requests.length;
    const s = await streamed('mgpt-1-27b', [{ role: 'system', content: 'S' }, { role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1' }, { role: 'user', content: 'q2' }]);
    expect(s.text).toBe('reply: q2');
    expect(s.usage?.total_tokens).toBeGreaterThan(0);
    expect(fake.requests.slice(before)[0].body.messages).toHaveLength(4);
    const ledger = await engine.store.accounts.ledger((await engine.accounts.find('local')).id);
    expect(ledger.at(-1)).toMatchObject({ entityId: null, model: 'mgpt-1-27b', outputTokens: s.usage!.completion_tokens });
    const logs = await engine.logs.list({}, (await engine.accounts.find('local')).userId);
    expect(logs.data[0]).toMatchObject({ model: 'mgpt-1-27b', status: 'ok' });
    expect(fake.requests.slice(before)[0].body.stream).toBe(true);
    const alias = await client.chat.completions.create({ model: 'game-1-lite-frozen', messages: [{ role: 'user', content: 'hey' }] });
    expect(alias.choices[0].message.content).toBe('reply: hey');
    expect(fake.requests.at(-1)!.body.stream).toBe(false);
  });

  it('a stateless completion with an Idempotency-Key is billed and logged once; retries replay it', async () => {
    const acct = await engine.accounts.create('retrier');
    const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: (await engine.keys.create('retrier', ['mgpt.responses:create'])).key!, maxRetries: 0 });
    const body = { model: 'mgpt-1-27b', messages: [{ role: 'user' as const, content: 'bill me once' }] };
    const headers = { headers: { 'Idempotency-Key': 'once-1' } };
    const before = fake.requests.length;
    const first = await c.chat.completions.create(body, headers);
    const second = await c.chat.completions.create(body, headers).withResponse();
    const third = await c.chat.completions.create(body, headers);
    expect(second.data.id).toBe(first.id);
    expect(third.id).toBe(first.id);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect((await streamedWith(c, body.model, body.messages, headers.headers)).text).toBe('reply: bill me once');
    expect(fake.requests.length - before).toBe(1);
    expect(await engine.store.accounts.ledger(acct.id)).toHaveLength(1);
    const logs = await engine.logs.list({}, acct.userId);
    expect(logs.data).toHaveLength(1);
    expect(logs.data[0]).toMatchObject({ status: 'ok' });
    expect((await engine.logs.get(logs.data[0].id, acct.userId)).response).toEqual({ chars: 'reply: bill me once'.length });
    // The key with another request: refused, nothing billed.
    const reused = await c.chat.completions.create({ ...body, messages: [{ role: 'user', content: 'other' }] }, headers).catch((x) => x);
    expect(reused.status).toBe(400);
    expect(await engine.store.accounts.ledger(acct.id)).toHaveLength(1);
  });

  it('universe:<id> is a universe turn, streamed and buffered, stored in the universe', async () => {
    const userId = (await engine.accounts.find('local')).userId;
    const { universe } = (await engine.universes.create({ storedPrompt: 'narrator' }, userId)) as { universe: string };
    const s = await streamed(`universe:${universe}`, [{ role: 'user', content: 'look around' }]);
    expect(s.text).toBe('reply: look around');
    expect(s.usage?.total_tokens).toBeGreaterThan(0);
    const b = await client.chat.completions.create({ model: `universe:${universe.slice(0, 8)}`, messages: [{ role: 'user', content: 'again' }] });
    expect(b.choices[0].message.content).toBe('reply: again');
    // The universe keeps its own history: the second turn's prompt holds the first.
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('look around');
  });
});

describe('OpenAI-compatible facade: sampling and tools reach the model', () => {
  const tools = [{ type: 'function' as const, function: { name: 'roll', parameters: { type: 'object', properties: { sides: { type: 'integer' } } } } }];

  it('passes sampling fields to the provider and refuses n > 1 and wrong types', async () => {
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'knobs' }, 'local');
    await client.chat.completions.create({
      model: 'entity:knobs', messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3, top_p: 0.5, max_completion_tokens: 9, stop: ['END'], seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2,
    });
    expect(fake.requests.at(-1)!.body).toMatchObject({ temperature: 0.3, top_p: 0.5, max_tokens: 9, stop: ['END'], seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2 });
    const n = await client.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'x' }], n: 2 }).catch((x) => x);
    expect(n.status).toBe(400);
    expect(n.error.message).toMatch(/n must be 1/);
    const hot = await client.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' as never }).catch((x) => x);
    expect(hot.status).toBe(400);
  });

  it('a stateless completion with tools returns the tool calls, streamed and not', async () => {
    fake.script({ toolCalls: [{ id: 'call_1', name: 'roll', arguments: '{"sides":6}' }] });
    const r = await client.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'roll' }], tools, tool_choice: 'required' });
    expect(fake.requests.at(-1)!.body).toMatchObject({ tools: [{ type: 'function', function: { name: 'roll' } }], tool_choice: 'required' });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'roll', arguments: '{"sides":6}' } }]);
    fake.script({ toolCalls: [{ id: 'call_2', name: 'roll', arguments: '{}' }] });
    const stream = await client.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'roll' }], tools, stream: true });
    const calls: unknown[] = [];
    let finish: string | null = null;
    for await (const ch of stream) {
      calls.push(...(ch.choices[0]?.delta.tool_calls ?? []));
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toEqual([{ index: 0, id: 'call_2', type: 'function', function: { name: 'roll', arguments: '{}' } }]);
    expect(finish).toBe('tool_calls');
  });

  it('an entity turn with tools stores the user message and the final reply, not the tool round', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'agent' }, 'local');
    fake.script({ toolCalls: [{ id: 'call_9', name: 'roll', arguments: '{"sides":20}' }] });
    const first = await client.chat.completions.create({ model: 'entity:agent', messages: [{ role: 'user', content: 'roll a d20' }], tools }).withResponse();
    expect(first.data.choices[0].message.tool_calls?.[0].id).toBe('call_9');
    expect(await transcript(e.id)).toEqual([]);
    const round = [
      { role: 'user' as const, content: 'roll a d20' },
      { role: 'assistant' as const, content: null, tool_calls: first.data.choices[0].message.tool_calls },
      { role: 'tool' as const, tool_call_id: 'call_9', content: '17' },
    ];
    fake.script({ text: 'You rolled 17.' });
    const done = await client.chat.completions.create({ model: 'entity:agent', messages: round, tools }).withResponse();
    expect(done.response.headers.get('mgpt-turn')).toBe('stored');
    expect(fake.requests.at(-1)!.body.messages.slice(-3).map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(await transcript(e.id)).toEqual([{ role: 'user', content: 'roll a d20' }, { role: 'assistant', content: 'You rolled 17.' }]);
    // The next message of that chat lines up: the tool round is not part of the conversation.
    await client.chat.completions.create({ model: 'entity:agent', messages: [...round, { role: 'assistant', content: 'You rolled 17.' }, { role: 'user', content: 'again' }] });
    expect(await transcript(e.id)).toHaveLength(4);
  });

  it('logs a stateless completion with the characters it generated', async () => {
    fake.script({ text: 'twelve chars' });
    await client.chat.completions.create({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'x' }] });
    const logs = await engine.logs.list({}, (await engine.accounts.find('local')).userId);
    const detail = await engine.logs.get(logs.data[0].id, (await engine.accounts.find('local')).userId);
    expect(detail).toMatchObject({ facade: 'stateless', response: { chars: 12 } });
  });
});
