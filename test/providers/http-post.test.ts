import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { post, readText } from '../../src/providers/openai/http-post.js';

// A server that, like llama-server's cpp-httplib, closes a kept-alive connection: here, on the
// second request it sees on a socket, it drops the socket without answering.
const sockets = new Map<Socket, number>();
let connections = 0;
const server = createServer((req, res) => {
  const seen = (sockets.get(req.socket) ?? 0) + 1;
  sockets.set(req.socket, seen);
  if (seen > 1) return req.socket.destroy();
  req.resume();
  req.on('end', () => res.end('ok'));
});
server.on('connection', () => connections++);
const url = await new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`)));
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('post() over a kept-alive connection', () => {
  it('sends a request again on a new connection when the reused one was closed before any response', async () => {
    const ask = async () => readText((await post(url, { headers: {}, body: '{}', timeoutMs: 5000 })).body);
    expect(await ask()).toBe('ok');
    expect(await ask()).toBe('ok');
    expect(connections).toBe(2);
  });

  it('never retries onto another closed connection: with every pooled one stale, each request still gets through', async () => {
    // Three requests at once leave three sockets in the pool, each of which the server will drop
    // on its next request (as llama-server closes after each streamed reply, without saying so).
    const ask = async () => readText((await post(url, { headers: {}, body: '{}', timeoutMs: 5000 })).body);
    await Promise.all([ask(), ask(), ask()]);
    const before = connections;
    for (let i = 0; i < 6; i++) expect(await ask()).toBe('ok');
    // Each of the six found a stale pooled socket at most once, then went out on a connection of its own.
    expect(connections - before).toBeGreaterThanOrEqual(6);
  });

  it('does not retry a request whose new connection fails: a refused connection is an error at once', async () => {
    const closed = createServer();
    const port = await new Promise<number>((resolve) => closed.listen(0, '127.0.0.1', () => resolve((closed.address() as AddressInfo).port)));
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(post(`http://127.0.0.1:${port}/v1`, { headers: {}, body: '{}', timeoutMs: 5000 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
