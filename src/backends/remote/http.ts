import type { Dispatcher } from 'undici';
import { CancelledError, ERROR_CODE_HEADER, ProviderError } from '../../core/errors.js';
import { type Attempt, parseRetryAfter, retrying, shouldRetry } from '../../core/retry.js';
import { durationText } from '../../core/rate-limits.js';
import { errorFromResponse } from './errors.js';

export interface HttpOptions {
  apiKey?: string;
  /** Retries (the shared policy in core/retry.ts), before any byte of a response was used. */
  maxRetries?: number;
  retryBaseMs?: number;
  /** The longest wait between attempts, a server's Retry-After included. */
  maxRetryDelayMs?: number;
  timeoutMs?: number;
  /** Told when the server rate limits a request and it is retried after a wait: what to show a person. */
  onRateLimitWait?: (notice: string) => void;
}

export interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

export interface SendOptions {
  json?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Repeating the request cannot duplicate anything: the server deduplicates it by a key it carries
   * (a requestId in the body). GET, HEAD, DELETE and requests with an Idempotency-Key header are so anyway.
   */
  idempotent?: boolean;
  /** A raw body instead of JSON (a file), opened afresh for each attempt. */
  raw?: { open: () => NodeJS.ReadableStream; type: string };
  /** This request's own timeout for headers and body (a long import), instead of the client's. */
  timeoutMs?: number;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'PUT']);

/** HTTP for the remote backend: bearer auth, JSON, the shared retry policy, typed errors. */
export class HttpClient {
  constructor(private readonly opts: HttpOptions) {}

  /** Sends a request; a 2xx response comes back unread, anything else is thrown as a typed error. */
  async send(method: string, url: string, o: SendOptions = {}): Promise<Sent> {
    const { request } = await import('undici');
    const headers: Record<string, string> = { ...o.headers };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const body = o.json === undefined ? undefined : JSON.stringify(o.json);
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (o.raw) headers['content-type'] = o.raw.type;
    const timeout = o.timeoutMs ?? this.opts.timeoutMs ?? 120_000;
    const hasKey = Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key');
    const policy = { idempotent: o.idempotent === true || hasKey || IDEMPOTENT_METHODS.has(method.toUpperCase()) };
    const origin = new URL(url).origin;

    const once = async (): Promise<Attempt<Sent>> => {
      try {
        const sent = o.raw ? (o.raw.open() as import('node:stream').Readable) : body;
        const res = await request(url, { method: method as Dispatcher.HttpMethod, headers, body: sent, signal: o.signal, headersTimeout: timeout, bodyTimeout: timeout });
        if (res.statusCode >= 200 && res.statusCode < 300) return { value: { status: res.statusCode, headers: res.headers, body: res.body } };
        const text = await res.body.text().catch(() => '');
        const failure = errorFromResponse(res.statusCode, parseBody(text), header(res.headers, 'x-request-id'), header(res.headers, ERROR_CODE_HEADER));
        return { failure, retry: shouldRetry({ status: res.statusCode }, policy), retryAfter: header(res.headers, 'retry-after') };
      } catch (err) {
        if (o.signal?.aborted || (err as { name?: string }).name === 'AbortError') return { failure: new CancelledError(), retry: false };
        const retry = shouldRetry({ error: err }, policy);
        const failure = new ProviderError(`cannot reach ${origin}: ${(err as Error).message}`, {
          retryable: retry,
          cause: err,
          hint: 'is the server running? check the URLs with: mgpt config list',
        });
        return { failure, retry };
      }
    };

    return retrying(
      {
        maxRetries: this.opts.maxRetries ?? 2,
        baseMs: this.opts.retryBaseMs ?? 200,
        maxDelayMs: this.opts.maxRetryDelayMs,
        signal: o.signal,
        onGiveUp: (failure, why, retryAfter) => rateLimited(failure, why, parseRetryAfter(retryAfter)),
        onWait: (failure, ms) => {
          if (failure instanceof ProviderError && failure.status === 429) this.opts.onRateLimitWait?.(`${failure.message}; retrying in ${durationText(ms)}`);
        },
      },
      once,
    );
  }

  async json<T>(method: string, url: string, o: SendOptions = {}): Promise<T> {
    const res = await this.send(method, url, o);
    return (await res.body.json()) as T;
  }
}

/** A 429 that outlasted the retries (or asked for a wait too long to take) says so, with the wait the server asked for. */
function rateLimited(failure: Error, why: 'not-retryable' | 'exhausted' | 'too-long', retryAfterMs: number | undefined): Error {
  if (!(failure instanceof ProviderError) || failure.status !== 429 || why === 'not-retryable') return failure;
  const wait = retryAfterMs === undefined ? 'a little' : durationText(retryAfterMs);
  const hint = why === 'too-long' ? `the server asks to wait ${wait}, longer than mgpt waits; retry then` : `wait ${wait} and retry`;
  return new ProviderError(`${failure.message}${why === 'exhausted' ? ' (still, after retrying)' : ''}`, { status: 429, hint, cause: failure });
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 200) };
  }
}

export function header(h: Sent['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}


