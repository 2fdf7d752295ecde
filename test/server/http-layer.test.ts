import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// The HTTP layer under the routes: request ids, node:http's own errors, closing, slow clients.
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;
const unexpected: unknown[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'), { recursive: true });
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.\n');
  engine = makeEngine(dir, { fake, promptsDir: join(dir, 'prompts') });
  key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read'])).key!;
  server = await listen(engine, '127.0.0.1', 0, {
    onUnexpectedError: (err) => unexpected.push(err),
    headersTimeoutMs: 1000,
    requestTimeoutMs: 1000,
  });
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

interface RawAnswer {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: string;
  /** How the connection ended: 'end' is a clean FIN, 'error:CODE' a reset or other failure. */
  ending: 'end' | 'open' | `error:${string}`;
}

/**
 * Speaks raw HTTP/1.1 on a fresh socket: writes `parts` (a function gets the socket to write on
 * its own), collects everything the server sends until the connection ends.
 */
function raw(write: string | Buffer | ((s: import('node:net').Socket) => void)): Promise<RawAnswer> {
  const url = new URL(server.url);
  return new Promise((resolve) => {
    const s = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let ending: RawAnswer['ending'] = 'open';
    s.on('data', (d) => chunks.push(d));
    s.on('error', (err: NodeJS.ErrnoException) => {
      ending = `error:${err.code ?? err.message}`;
    });
    s.on('end', () => {
      if (ending === 'open') ending = 'end';
    });
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = rest.join('\r\n\r\n');
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
      resolve({ status: Number(head.split(' ')[1]), head, headers, body, ending });
    });
    s.on('connect', () => {
      if (typeof write === 'function') write(s);
      else s.write(write);
    });
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    if (nl < 0) return out;
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

const auth = () => `Authorization: Bearer ${key}\r\n`;

describe('X-Request-Id', () => {
  it('is on HEAD answers too', async () => {
    const res = await fetch(`${server.url}/v1/entities`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("mirrors the caller's id in the universe response diagnostics and the header; refuses an insane one", async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const uni = await (await fetch(`${server.url}/api/mgpt/universes`, { method: 'POST', headers, body: JSON.stringify({ storedPrompt: 'narrator' }) })).json();
    const body = JSON.stringify({ model: 'game-1-lite-frozen', universe: uni.universe, userInput: 'hello' });
    const res = await fetch(`${server.url}/api/mgpt/responses`, { method: 'POST', headers: { ...headers, 'x-request-id': 'corr-42' }, body });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('corr-42');
    const json = await res.json();
    expect(json.diagnostics.xRequestId).toBe('corr-42');
    expect(json.diagnostics.requestId).toBeUndefined();

    for (const bad of ['x'.repeat(201), 'has space', 'caf\u00e9']) {
      const r = await raw(`GET /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}X-Request-Id: ${bad}\r\nConnection: close\r\n\r\n`);
      expect(r.status).toBe(200);
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("node:http's own 400 and 431 answer in the route family's JSON shape, with an id", async () => {
    const garbage = await raw('GARBAGE\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(garbage.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(garbage.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(garbage.body)).toEqual({ error: expect.stringMatching(/malformed/) });

    const huge = `X-Big: ${'a'.repeat(20_000)}\r\n`.repeat(5);
    const universe = await raw(`POST /api/mgpt/responses HTTP/1.1\r\nHost: x\r\n${huge}\r\n`);
    expect(universe.status).toBe(431);
    expect(universe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(universe.body)).toEqual({ detail: expect.stringMatching(/headers too large/) });

    const entity = await raw(`GET /v1/entities HTTP/1.1\r\nHost: x\r\nX-Request-Id: corr-431\r\n${huge}\r\n`);
    expect(entity.status).toBe(431);
    expect(entity.headers['x-request-id']).toBe('corr-431');
    expect(JSON.parse(entity.body)).toEqual({ error: expect.stringMatching(/headers too large/) });
    expect((await fetch(`${server.url}/v1/entities`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });
});

describe('bodies over the limit and clients that leave', () => {
  it('answers a chunked body over the limit with 413 and Connection: close, then a clean FIN', async () => {
    const r = await raw((s) => {
      s.write(`POST /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      // 2 MiB in 64 KiB chunks: the limit (1 MiB) can only be found by reading.
      for (let i = 0; i < 32; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      s.end('0\r\n\r\n');
    });
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
    expect(r.headers['x-request-id']).toBeTruthy();
    expect(JSON.parse(r.body)).toEqual({ error: 'request body over 1048576 bytes' });
    expect(r.ending).toBe('end');
  });

  it('answers an oversized chunked body to the facade the same way: 413 in the OpenAI shape, Connection: close, a clean FIN', async () => {
    const r = await raw((s) => {
      s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (let i = 0; i < 32; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      s.end('0\r\n\r\n');
    });
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body).error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    // Kept alive, the unread rest of the body reset the connection (and the next request on it).
    expect(r.ending).toBe('end');
  });

  it('a client that hangs up mid-upload is a disconnect, not a server error', async () => {
    const before = unexpected.length;
    await raw((s) => {
      s.write(`POST /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`);
      // Destroyed once the server has begun reading: the first write is in its hands.
      setImmediate(() => s.destroy());
    });
    // A full request after the hang-up: the server has seen the close by the time this answers.
    expect((await fetch(`${server.url}/v1/entities`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await new Promise((r) => setImmediate(r));
    expect(unexpected.slice(before)).toEqual([]);
  });
});

describe('slow clients', () => {
  it('cuts a body trickled slower than the request timeout, but not a streamed reply longer than it', async () => {
    const r = await raw((s) => {
      s.write(`POST /api/mgpt/universes HTTP/1.1\r\nHost: x\r\n${auth()}X-Request-Id: corr-slow\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
      let sent = 0;
      // One byte every 100 ms: 10 s for the body, far over the 1 s limit. Stops when cut.
      const t = setInterval(() => {
        if (s.destroyed || !s.writable) return clearInterval(t);
        if (++sent > 98) {
          clearInterval(t);
          s.end();
          return;
        }
        s.write(' ');
      }, 100);
      s.on('close', () => clearInterval(t));
    });
    expect(r.status).toBe(408);
    expect(r.headers['x-request-id']).toBe('corr-slow');
    expect(JSON.parse(r.body)).toEqual({ detail: expect.stringMatching(/timeout|too slow/i) });
    expect(r.ending).toBe('end');

    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await (await fetch(`${server.url}/v1/entities`, { method: 'POST', headers, body: '{"model":"mgpt-1-27b"}' })).json();
    // Six chunks 400 ms apart: the reply takes over twice the request timeout.
    fake.script({ text: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 400 });
    const sse = await fetch(`${server.url}/v1/entities/${created.id}/messages`, { method: 'POST', headers, body: '{"content":"slow"}' });
    const text = await sse.text();
    expect(sse.status).toBe(200);
    expect(text).toContain('data: [DONE]');
  });
});

describe('connection limits', () => {
  it('closes connections past --max-connections, and idle keep-alive ones after the keep-alive timeout', async () => {
    const small = await listen(engine, '127.0.0.1', 0, { maxConnections: 1, keepAliveTimeoutMs: 300 });
    const url = new URL(small.url);
    try {
      const open = () => connect(Number(url.port), url.hostname);
      const ended = (s: import('node:net').Socket) =>
        new Promise<{ data: string; how: string }>((resolve) => {
          let data = '';
          let how = 'close';
          s.on('data', (d) => (data += d));
          s.on('error', (e: NodeJS.ErrnoException) => (how = `error:${e.code}`));
          s.on('end', () => (how = 'end'));
          s.on('close', () => resolve({ data, how }));
        });
      const a = open();
      const aEnded = ended(a);
      const first = new Promise<string>((resolve) => a.once('data', (d) => resolve(String(d))));
      a.write(`GET /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`);
      expect(await first).toMatch(/^HTTP\/1\.1 200 /);
      // A is held open (keep-alive): a second connection is over the limit.
      const b = open();
      b.on('connect', () => b.write(`GET /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`));
      expect((await ended(b)).data).toBe('');
      // A, idle, is closed by the server after the keep-alive timeout; then a new one is served.
      expect((await aEnded).how).toBe('end');
      const c = open();
      c.on('connect', () => c.write(`GET /v1/entities HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`));
      expect((await ended(c)).data).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      await small.close();
    }
  });
});

describe('the request log', () => {
  it('a listener that throws after the answer is an unexpected error told once, not an uncaught exception', async () => {
    const told: unknown[] = [];
    const noisy = await listen(engine, '127.0.0.1', 0, {
      metricsEndpoint: true,
      onRequest: () => {
        throw new Error('log sink failed');
      },
      onUnexpectedError: (err) => told.push(err),
    });
    try {
      expect((await fetch(`${noisy.url}/v1/entities/%E0%A4%A`)).status).toBe(401);
      expect((await fetch(`${noisy.url}/healthz`)).status).toBe(200);
      await expect.poll(() => told.map((e) => (e as Error).message)).toEqual(['log sink failed', 'log sink failed']);
    } finally {
      await noisy.close();
    }
  });
});
