import { CancelledError, ProviderError, transportFailure } from '../../core/errors.js';
import { retrying, shouldRetry } from '../../core/retry.js';
import type { EmbeddingModel } from '../spec.js';
import { type PostResponse, post, readText } from './http-post.js';
import { errorText } from './openai-chat.js';

export interface OpenAIEmbeddingOptions {
  /** The server, ending in /v1 (OpenAI, Ollama, `llama-server --embeddings`). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Sent as `dimensions` when set: OpenAI's text-embedding-3 models shorten their vectors to it. */
  dimensions?: number;
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseMs?: number;
}

/**
 * A question's embedding is waited for before the reply's first byte, so a server that does not
 * answer in this long is taken as one that failed (recall then ranks by words alone), not waited
 * for as long as a reply would be.
 */
export const EMBEDDING_TIMEOUT_MS = 10_000;

/** The answer of `/v1/embeddings`, as far as mgpt reads it. */
interface EmbeddingList {
  data?: Array<{ index?: unknown; embedding?: unknown }>;
}

/** `POST {baseUrl}/embeddings` of any OpenAI-compatible server. */
export class OpenAIEmbeddingModel implements EmbeddingModel {
  readonly name: string;

  constructor(private readonly opts: OpenAIEmbeddingOptions) {
    this.name = opts.dimensions ? `${opts.model}@${opts.dimensions}` : opts.model;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (!texts.length) return [];
    const body: Record<string, unknown> = { model: this.opts.model, input: texts, encoding_format: 'float' };
    if (this.opts.dimensions) body.dimensions = this.opts.dimensions;
    const res = await this.send(JSON.stringify(body), signal);
    let text: string;
    try {
      text = await readText(res.body);
    } catch (err) {
      throw this.wrap(err, signal);
    }
    return vectorsOf(text, texts.length);
  }

  private send(body: string, signal?: AbortSignal): Promise<PostResponse> {
    const url = this.opts.baseUrl.replace(/\/+$/, '') + '/embeddings';
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    // Embedding changes nothing upstream: repeating it is safe.
    const policy = { idempotent: true };
    const timeoutMs = this.opts.timeoutMs ?? EMBEDDING_TIMEOUT_MS;
    return retrying<PostResponse>({ maxRetries: this.opts.maxRetries ?? 1, baseMs: this.opts.retryBaseMs ?? 250, signal }, async () => {
      try {
        const res = await post(url, { headers, body, signal, timeoutMs });
        if (res.statusCode >= 200 && res.statusCode < 300) return { value: res };
        const text = await readText(res.body).catch(() => '');
        const retry = shouldRetry({ status: res.statusCode }, policy);
        const failure = new ProviderError(`embeddings: provider answered ${res.statusCode}: ${errorText(text)}`, {
          retryable: retry,
          upstreamStatus: res.statusCode,
        });
        return { failure, retry };
      } catch (err) {
        const failure = this.wrap(err, signal);
        return { failure, retry: failure instanceof ProviderError && shouldRetry({ error: err }, policy) };
      }
    });
  }

  private wrap(err: unknown, signal?: AbortSignal): ProviderError | CancelledError {
    if (err instanceof ProviderError || err instanceof CancelledError) return err;
    if (signal?.aborted || (err as { name?: string }).name === 'AbortError') return new CancelledError();
    return new ProviderError(`embeddings: cannot reach ${this.opts.baseUrl}: ${(err as Error).message}`, {
      retryable: shouldRetry({ error: err }, { idempotent: true }),
      cause: err,
      failure: transportFailure(err) ?? 'connection',
    });
  }
}

/** The vectors of an answer, in the inputs' order; anything else than one finite vector per input, all one length, is refused. */
export function vectorsOf(text: string, count: number): Float32Array[] {
  let list: EmbeddingList;
  try {
    list = JSON.parse(text) as EmbeddingList;
  } catch {
    throw new ProviderError(`embeddings: the provider's answer is not JSON: ${text.slice(0, 120)}`);
  }
  const data = Array.isArray(list.data) ? list.data : [];
  const out: Float32Array[] = new Array(count);
  data.forEach((d, i) => {
    const at = typeof d.index === 'number' ? d.index : i;
    if (Number.isInteger(at) && at >= 0 && at < count && isVector(d.embedding)) out[at] = Float32Array.from(d.embedding);
  });
  const length = out[0]?.length;
  for (let i = 0; i < count; i++) {
    if (!out[i] || out[i].length !== length) throw new ProviderError(`embeddings: the provider gave no usable vector for input ${i} of ${count}`);
  }
  return out;
}

function isVector(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x));
}
