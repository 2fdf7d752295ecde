import { connect } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/server/env.js';
import { header } from '../../src/server/headers.js';

// header() reads node's raw header list instead of building a WHATWG Headers object per request:
// it must give what Headers.get (c.req.header) gives, for the headers auth and the body reader read.
let server: ServerType;
let port = 0;

beforeAll(async () => {
  const app = new Hono<Env>();
  app.get('/h/:name', (c) => {
    const name = c.req.param('name');
    return c.json({ ours: header(c, name) ?? null, hono: c.req.header(name) ?? null });
  });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
      port = info.port;
      resolve();
    });
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Sends raw header lines (repeats and odd spacing included) and returns both readings. */
function ask(name: string, lines: string[]): Promise<{ ours: string | null; hono: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))));
    socket.on('error', reject);
    socket.write(`GET /h/${name} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`);
  });
}

describe('header()', () => {
  it.each([
    ['authorization', ['Authorization: Bearer abc']],
    ['authorization', ['authorization: Bearer a', 'AUTHORIZATION: Bearer b']],
    ['x-request-id', ['X-Request-Id:    spaced   ']],
    ['x-request-id', ['X-Request-Id: \tone\t', 'x-request-id: two']],
    ['content-type', ['Content-Type: application/json; charset=utf-8']],
    ['idempotency-key', []],
    ['X-Request-Id', ['x-request-id: mixed-case name']],
    ['x-empty', ['X-Empty:']],
  ])('reads %s as Headers.get does (%j)', async (name, lines) => {
    const { ours, hono } = await ask(name, lines);
    expect(ours).toBe(hono);
  });

  it('joins repeated values the way a refused key sees them', async () => {
    expect((await ask('authorization', ['Authorization: Bearer a', 'Authorization: Bearer b'])).ours).toBe('Bearer a, Bearer b');
  });
});
