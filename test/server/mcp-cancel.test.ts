import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// A send over /mcp is a turn like POST .../messages: a client that hangs up mid-reply cancels it,
// and nothing of it is stored.
describe('/mcp send and a client that goes away', () => {
  let fake: FakeOpenAI;
  let engine: Engine;
  let server: Listening;
  let key: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    engine = makeEngine(tempDir('mgpt-mcp-cancel-'), { fake });
    server = await listen(engine, '127.0.0.1', 0, { mcp: { allowSend: true, version: '0.0.0' } });
    key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  });
  afterAll(async () => {
    await server?.close();
    engine?.close();
    await fake?.close();
  });

  it('cancels the turn: the provider call ends and the transcript is as before', async () => {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
    fake.script({ text: ['a', ' slow', ' reply'], chunkDelayMs: 1000 });
    const [asked, aborted] = [fake.requests.length, fake.aborted];
    const gone = new AbortController();
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'send', arguments: { entity: 'ada', content: 'take your time' } } };
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const request = fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body), signal: gone.signal });
    while (fake.requests.length === asked) await new Promise((r) => setTimeout(r, 10));
    gone.abort();
    await expect(request).rejects.toThrow();
    while (fake.aborted === aborted) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 200));
    expect((await engine.entities.get(id, 'local')).transcript.messages).toBe(0);
    // The lease is free again: the next send is answered and stored.
    const next = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ ...body, id: 2, params: { name: 'send', arguments: { entity: 'ada', content: 'now' } } }) });
    expect(next.status).toBe(200);
    expect(JSON.stringify(await next.json())).toContain('reply: now');
    expect((await engine.entities.get(id, 'local')).transcript.messages).toBe(2);
  });
});
