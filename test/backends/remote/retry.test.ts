import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteBackend } from '../../../src/backends/remote/remote-backend.js';
import { CancelledError, ProviderError } from '../../../src/core/errors.js';

// The remote backend's retries against a tiny real HTTP server on 127.0.0.1 that scripts each answer.
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function tiny(handler: Handler): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`);
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({ close: () => server.close() });
  server.on('connection', (s) => servers.push({ close: () => s.destroy() }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const backend = (url: string) => new RemoteBackend({ baseUrl: url, entitiesUrl: `${url}/v1`, apiKey: 'k', maxRetries: 2, retryBaseMs: 1 });
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('remote backend: 429', () => {
  it('retries after Retry-After (seconds), then succeeds', async () => {
    let n = 0;
    const s = await tiny((_req, res) => (n++ === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { object: 'list', data: [] })));
    await expect(backend(s.url).listEntities()).resolves.toEqual({ object: 'list', data: [] });
    expect(s.hits).toEqual(['GET /v1/entities', 'GET /v1/entities']);
  });

  it('reads Retry-After as an HTTP date too', async () => {
    let n = 0;
    const past = new Date(Date.now() - 5000).toUTCString();
    const s = await tiny((_req, res) => (n++ === 0 ? json(res, 429, { error: 'slow down' }, { 'retry-after': past }) : json(res, 200, { object: 'list', data: [] })));
    await expect(backend(s.url).listEntities()).resolves.toEqual({ object: 'list', data: [] });
    expect(s.hits).toHaveLength(2);
  });

  it('fails with exit 7 and says it was rate limited once the retries are used up, also for a create', async () => {
    const s = await tiny((_req, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '0' }));
    const err = await backend(s.url).createEntity({ model: 'mgpt-1-27b' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ exitCode: 7, message: expect.stringMatching(/^rate limited by the server: slow down/), hint: expect.any(String) });
    // A 429 was refused unprocessed: even a create may be repeated.
    expect(s.hits).toEqual(['POST /v1/entities', 'POST /v1/entities', 'POST /v1/entities']);
  });

  it('does not wait out a Retry-After longer than its bound', async () => {
    const s2 = await tiny((_req, res) => json(res, 429, { error: 'quota' }, { 'retry-after': '3600' }));
    const err2 = await backend(s2.url).listEntities().catch((e: unknown) => e);
    expect(err2).toMatchObject({ exitCode: 7, message: expect.stringMatching(/rate limited/), hint: 'the server asks to wait 1h0m0s, longer than mgpt waits; retry then' });
    expect(s2.hits).toHaveLength(1);
  });
});

describe('remote backend: what is retried', () => {
  it('never repeats a create whose connection was reset after it was sent', async () => {
    const s = await tiny((req) => req.socket.destroy());
    const err = await backend(s.url).createEntity({ model: 'mgpt-1-27b', name: 'once' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 7 });
    expect(s.hits).toEqual(['POST /v1/entities']);
    const u = await tiny((req) => req.socket.destroy());
    await backend(u.url).createUniverse({ storedPrompt: 'p' } as never).catch(() => undefined);
    await backend(u.url).generateImage({ sceneUid: 's' } as never).catch(() => undefined);
    expect(u.hits).toEqual(['POST /api/mgpt/universes', 'POST /api/mgpt/images']);
  });

  it('repeats what cannot duplicate: a GET, and a POST carrying a key the server deduplicates', async () => {
    const s = await tiny((req) => req.socket.destroy());
    await expect(backend(s.url).listEntities()).rejects.toMatchObject({ exitCode: 7 });
    expect(s.hits).toHaveLength(3);
    const r = await tiny((req) => req.socket.destroy());
    await expect(backend(r.url).respond({ model: 'game-1-lite-frozen', userInput: 'x' })).rejects.toMatchObject({ exitCode: 7 });
    expect(r.hits).toHaveLength(3);
    const e = await tiny((_req, res) => json(res, 503, { error: 'busy' }));
    await expect(backend(e.url).createEntity({ model: 'mgpt-1-27b' })).rejects.toMatchObject({ exitCode: 7 });
    expect(e.hits).toHaveLength(1);
  });

  it('an abort during a send is the cancelled turn, not a raw AbortError', async () => {
    const s = await tiny((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n');
    });
    const abort = new AbortController();
    const events: string[] = [];
    const err = await (async () => {
      for await (const ev of backend(s.url).sendMessage('e1', { content: 'x', signal: abort.signal })) {
        events.push(ev.type);
        if (ev.type === 'delta') abort.abort();
      }
    })().catch((e: unknown) => e);
    expect(events).toEqual(['start', 'delta']);
    expect(err).toBeInstanceOf(CancelledError);
    expect((err as Error).message).toBe('cancelled: nothing of this turn was stored');
  });
});
