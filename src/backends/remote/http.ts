import type { Dispatcher } from 'undici';
import { CancelledError, type MgptError, ProviderError } from '../../core/errors.js';
import { errorFromResponse } from './errors.js';

export interface HttpOptions {
  apiKey?: string;
  /** Retries on connection errors and 5xx, before any byte of a response was used. */
  maxRetries?: number;
  retryBaseMs?: number;
  timeoutMs?: number;
}

export interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

const RETRYABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']);

/** HTTP for the remote backend: bearer auth, JSON, bounded retries, typed errors. */
export class HttpClient {
  constructor(private readonly opts: HttpOptions) {}

  /** Sends a request; a 2xx response comes back unread, anything else is thrown as a typed error. */
  async send(method: string, url: string, o: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Sent> {
    const { request } = await import('undici');
    const headers: Record<string, string> = { ...o.headers };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const body = o.json === undefined ? undefined : JSON.stringify(o.json);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const timeout = this.opts.timeoutMs ?? 120_000;
    const max = this.opts.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let failure: MgptError;
      try {
        const res = await request(url, { method: method as Dispatcher.HttpMethod, headers, body, signal: o.signal, headersTimeout: timeout, bodyTimeout: timeout });
        if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body: res.body };
        const text = await res.body.text().catch(() => '');
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = { error: text.slice(0, 200) };
        }
        failure = errorFromResponse(res.statusCode, parsed, header(res.headers, 'x-request-id'));
      } catch (err) {
        if (o.signal?.aborted || (err as { name?: string }).name === 'AbortError') throw new CancelledError();
        const code = (err as { code?: string }).code ?? '';
        failure = new ProviderError(`cannot reach ${new URL(url).origin}: ${(err as Error).message}`, {
          retryable: RETRYABLE.has(code),
          cause: err,
          hint: 'is the server running? check the URLs with: mgpt config list',
        });
      }
      const retryable = failure instanceof ProviderError && failure.retryable;
      if (!retryable || attempt >= max) throw failure;
      await new Promise((r) => setTimeout(r, (this.opts.retryBaseMs ?? 200) * 2 ** attempt));
    }
  }

  async json<T>(method: string, url: string, o: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<T> {
    const res = await this.send(method, url, o);
    return (await res.body.json()) as T;
  }
}

export function header(h: Sent['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
