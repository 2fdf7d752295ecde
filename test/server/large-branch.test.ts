import { Agent, get, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

// How long the event loop is held is measured by `npm run bench` (the branch rows); this checks
// the behaviour behind it: other requests are answered while a large branch is being made.
const dir = tempDir();
let engine: Engine;
let server: Listening;
let key: string;

beforeAll(async () => {
  engine = makeEngine(dir);
  key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  server = await listen(engine, '127.0.0.1', 0, { bodyLimit: 8 * 1024 * 1024 });
});
afterAll(async () => {
  await server.close();
  engine.close();
});

/** POSTs `body` with node:http, calling `sent` once the last byte was handed to the socket. */
function post(url: string, body: string, sent: () => void): Promise<{ status: number; id: string | null; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'mgpt-on-conflict': 'branch' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => resolve({ status: res.statusCode!, id: res.headers['x-entity-id'] as string, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body, sent);
  });
}

/** Keep-alive, as a client polling a server would be (and as fetch is). */
const pings = new Agent({ keepAlive: true });
afterAll(() => pings.destroy());

/**
 * GET /healthz, answered 200. On a kept-alive socket, the server may close the connection as idle
 * (its keepAliveTimeout) just as this request reaches it: with the process this busy, the timer can
 * run before the waiting request is read, and closing a socket with unread bytes resets it. That is
 * the keep-alive race HTTP clients retry idempotent requests for (node's docs on
 * `request.reusedSocket`), so such a reset is sent again, once, on a fresh connection; any other
 * failure, or one on a fresh connection, is the server's and fails the test.
 */
function healthz(url: string, agent: Agent | false = pings): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/healthz`, { agent }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode === 200)).on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (agent && req.reusedSocket && err.code === 'ECONNRESET') resolve(healthz(url, false));
      else reject(err);
    });
  });
}

function forgedHistory(messages: number) {
  const out = Array.from({ length: messages }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}: a line of ordinary words` }));
  out.push({ role: 'user', content: 'and now?' });
  return out;
}

describe('a large branch', () => {
  it('lets /healthz be answered while a 25,000-message branch is counted, planned and stored', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'trunk' }, 'local');
    for await (const _ of engine.entities.send(e.id, { content: 'the first message' }, 'local'));
    let uploaded = false;
    let branched = false;
    const branch = post(`${server.url}/v1/chat/completions`, JSON.stringify({ model: 'entity:trunk', messages: forgedHistory(25_000) }), () => (uploaded = true))
      .then((r) => ((branched = true), r));
    while (!uploaded) await new Promise((r) => setTimeout(r, 1));
    // Pings sent once the whole body was sent, answered before the branch's reply.
    let answeredDuring = 0;
    while (!branched) {
      const ok = await healthz(server.url);
      if (ok && !branched) answeredDuring++;
    }
    const r = await branch;
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('and now?');
    // Held in one piece (before), the loop answered no ping until the branch's reply was written.
    expect(answeredDuring).toBeGreaterThanOrEqual(5);
    const branchRow = await engine.entities.get(r.id!, 'local');
    expect(branchRow.transcript.messages).toBe(25_002);
    expect((await engine.entities.window(r.id!, 'local')).tokens).toBeLessThanOrEqual(branchRow.window.budget_tokens);
  });
});
