/**
 * One HTTP POST to a provider over Node's own http/https, with keep-alive and undici's timeouts.
 *
 * Why not undici: loading its bundle takes 60-100 ms and touches globalThis.Headers, which loads
 * Node's internal copy of undici too, and its first request compiles a WASM HTTP parser (~50 ms):
 * most of what a one-shot `mgpt send` to a real provider waited before its first byte. Node's
 * parser is native and its http module loads in a few milliseconds.
 */
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

// require(), not import(): in the CommonJS bundle an import() of a built-in starts Node's ESM
// loader (~5 ms before the first request); https (with tls) loads only for https URLs.
const requireBuiltin = createRequire(import.meta.url);

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  /** POST unless said (a GET sends no body). */
  method?: 'GET' | 'POST';
  signal?: AbortSignal;
  /** The longest silence: before the response headers, and then between bytes of the body. */
  timeoutMs: number;
}

export interface PostResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The unread body: async-iterable; destroy() it when not read to the end. */
  body: IncomingMessage;
}

/** A silence longer than the timeout. Before the headers it is a connection failure (retried). */
export class TimeoutError extends Error {
  constructor(
    message: string,
    readonly code: 'ETIMEDOUT' | 'ERR_BODY_TIMEOUT',
  ) {
    super(message);
    this.name = 'TimeoutError';
  }
}

interface Transport {
  request: typeof import('node:http').request;
  agent: Agent;
}

// Keep-alive agents, one per protocol, created on first use: a batch reuses its connections.
const transports = new Map<string, Transport>();

function agentFor(protocol: string): Transport {
  let t = transports.get(protocol);
  if (!t) {
    const mod = requireBuiltin(protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
    transports.set(protocol, (t = { request: mod.request, agent: new mod.Agent({ keepAlive: true }) }));
  }
  return t;
}

/**
 * POSTs `body` to `url`; resolves with the response as soon as its headers arrive. A kept-alive
 * connection the server closed (llama-server closes one after 5 s idle, and after each streamed
 * reply without saying so in its headers) fails as a reset before any response: that request never
 * reached the server, so it is sent again (the pattern Node's documentation gives for
 * `request.reusedSocket`), on a connection of its own rather than the pool's: when the server
 * closed several pooled connections, the next one in the pool is just as dead.
 */
export async function post(url: string, o: PostOptions): Promise<PostResponse> {
  try {
    return await postOnce(url, o, true);
  } catch (err) {
    if (!(err instanceof StaleSocketError)) throw err;
    return postOnce(url, o, false);
  }
}

/** A reused keep-alive socket that turned out to be closed by the server. */
class StaleSocketError extends Error {}

/** `pooled` false: a new connection, used once (`agent: false`), which no earlier close can have reached. */
function postOnce(url: string, o: PostOptions, pooled: boolean): Promise<PostResponse> {
  const target = new URL(url);
  const { request, agent } = agentFor(target.protocol);
  return new Promise<PostResponse>((resolve, reject) => {
    const method = o.method ?? 'POST';
    const headers = method === 'POST' ? { ...o.headers, 'content-length': String(Buffer.byteLength(o.body)) } : o.headers;
    const req = request(target, { method, headers, agent: pooled ? agent : false, signal: o.signal });
    let response: IncomingMessage | undefined;
    // The socket's idle timer covers both waits (Node's agent clears it when the socket is freed).
    req.setTimeout(o.timeoutMs, () => {
      const err = response
        ? new TimeoutError(`no data from the provider for ${o.timeoutMs} ms`, 'ERR_BODY_TIMEOUT')
        : new TimeoutError(`no response from the provider within ${o.timeoutMs} ms`, 'ETIMEDOUT');
      req.destroy(err);
      response?.destroy(err);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A write onto a socket the peer already closed fails as EPIPE rather than a reset.
      const stale = req.reusedSocket && !response && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !o.signal?.aborted;
      reject(stale ? new StaleSocketError(err.message) : err);
    });
    req.on('response', (res) => {
      response = res;
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end(method === 'POST' ? o.body : undefined);
  });
}

/**
 * The whole body as text; rejects when it fails or ends early (a timeout, a cancel, a reset).
 * Events rather than `for await`: a stream's async iterator sets up more per reply than a
 * buffered completion's own parse costs.
 */
export function readText(body: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    body.once('error', reject);
    body.once('close', () => {
      // What `for await` over the body threw in this case.
      if (!body.readableEnded) reject(body.errored ?? Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
