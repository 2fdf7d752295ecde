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
});
