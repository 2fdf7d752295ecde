import { CancelledError, ContextOverflowError, ProviderError, transportFailure } from '../../core/errors.js';
import { ceiling } from '../../core/models.js';
import { retrying, shouldRetry } from '../../core/retry.js';
import type { ChatModel, ChatRequest, GeneratedImage, ImageGenerationRequest, ProviderUsage, RouteLimits, ServerContext, StreamPart } from '../spec.js';
import { SseDecoder } from '../../core/wire/sse.js';
import { parseContextOverflow, streamOverflow } from './context-overflow.js';
import { type PostResponse, post, readText } from './http-post.js';

export interface OpenAIChatOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Connect/headers timeout and the longest silence allowed between streamed bytes. */
  timeoutMs?: number;
  /** Retries on connect errors, 429 and 5xx, only before the response body started. */
  maxRetries?: number;
  retryBaseMs?: number;
  /** The route's limits: maxTokens and temperature are sent when set and the request sets none. */
  contextSize?: number;
  maxTokens?: number;
  temperature?: number;
  sharedSlots?: number;
}

/** llama-server's `/props`, as far as mgpt reads it. */
interface Props {
  default_generation_settings?: { n_ctx?: unknown };
  total_slots?: unknown;
}

/** The per-slot context and the slots in a `/props` answer, when it has a context. */
function propsContext(text: string): ServerContext | undefined {
  try {
    const props = JSON.parse(text) as Props;
    const n = props.default_generation_settings?.n_ctx;
    if (!isCount(n)) return undefined;
    return { contextTokens: n, ...(isCount(props.total_slots) ? { slots: props.total_slots } : {}) };
  } catch {
    return undefined;
  }
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0;
}

/** How long `/props` may take: a server that is slow to say is taken as one that does not. */
const PROPS_TIMEOUT_MS = 2000;

/** Any OpenAI-compatible `/v1/chat/completions` server (Ollama, llama-server, vLLM, OpenAI, ...). */
export class OpenAIChatModel implements ChatModel {
  readonly provider = 'openai';
  readonly modelId: string;
  readonly routeKey: string;
  readonly limits: RouteLimits;

  constructor(private readonly opts: OpenAIChatOptions) {
    this.modelId = opts.model;
    this.routeKey = `openai:${opts.baseUrl.replace(/\/+$/, '')}#${opts.model}`;
    this.limits = { contextSize: opts.contextSize, maxTokens: opts.maxTokens, temperature: opts.temperature, sharedSlots: opts.sharedSlots };
  }

  async *stream(req: ChatRequest): AsyncIterable<StreamPart> {
    if (req.buffered) return yield* this.whole(req);
    const body = JSON.stringify(this.body(req));
    const res = await this.connect(body, req.signal);
    const state: ChunkState = { tools: new Map(), finish: 'stop' };
    try {
      yield* readStream(res.body, state);
    } catch (err) {
      throw this.wrap(err, req.signal);
    } finally {
      res.body.destroy();
    }
    for (const [, t] of [...state.tools.entries()].sort((a, b) => a[0] - b[0])) {
      yield { type: 'tool-call', callId: t.id, name: t.name, arguments: t.arguments };
    }
    yield { type: 'finish', reason: state.finish };
  }

  /** The reply in one piece (`stream: false`), as the same parts a stream gives. */
  private async *whole(req: ChatRequest): AsyncIterable<StreamPart> {
    const { stream_options: _, ...fields } = this.body(req);
    // Nothing arrives until the whole reply is made: a slow model is silent that long, not dead.
    const res = await this.connect(JSON.stringify({ ...fields, stream: false }), req.signal, 'application/json', WHOLE_REPLY_SILENCE);
    let json: WholeCompletion;
    try {
      json = JSON.parse(await readText(res.body)) as WholeCompletion;
    } catch (err) {
      throw err instanceof SyntaxError ? new ProviderError('provider sent a completion that is not JSON') : this.wrap(err, req.signal);
    }
    yield* wholeParts(json);
  }

  /**
   * llama-server's `/props` (beside `/v1`): its per-slot context, `default_generation_settings.n_ctx`,
   * and its slots, `total_slots`. A server that answers without a context (a 404, another shape) is
   * not asked again.
   */
  async serverContext(signal?: AbortSignal): Promise<ServerContext | undefined> {
    if (this.noProps) return undefined;
    const url = this.opts.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '') + '/props';
    const headers: Record<string, string> = this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
    try {
      const res = await post(url, { method: 'GET', headers, body: '', signal, timeoutMs: PROPS_TIMEOUT_MS });
      const text = await readText(res.body);
      const n = res.statusCode === 200 ? propsContext(text) : undefined;
      if (n !== undefined) return n;
      this.noProps = true;
    } catch {
      // Down or slow this once: asked again at the next rotation that needs it.
    }
    return undefined;
  }

  private noProps = false;

  /** Image output through chat completions (`modalities: ["image","text"]` + `image_config`). */
  async generateImage(req: ImageGenerationRequest): Promise<{ images: GeneratedImage[]; usage?: ProviderUsage }> {
    const body = JSON.stringify({
      model: this.opts.model,
      messages: req.messages,
      modalities: ['image', 'text'],
      image_config: { image_size: req.imageSize, aspect_ratio: req.aspectRatio },
      stream: false,
    });
    const res = await this.connect(body, req.signal, 'application/json');
    let json: ImageCompletion;
    try {
      json = JSON.parse(await readText(res.body)) as ImageCompletion;
    } catch (err) {
      throw this.wrap(err, req.signal);
    }
    const images: GeneratedImage[] = [];
    for (const img of json.choices?.[0]?.message?.images ?? []) {
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(img.image_url?.url ?? '');
      if (m) images.push({ mimeType: m[1], data: m[2] });
    }
    if (images.length === 0) throw new ProviderError('the provider returned no image', { hint: 'is the routed model an image model?' });
    const u = json.usage;
    return { images, usage: u ? { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 } : undefined };
  }

  private body(req: ChatRequest): Record<string, unknown> {
    const b: Record<string, unknown> = {
      model: this.opts.model,
      messages: req.messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    Object.assign(b, samplingFields(req, this.limits));
    if (req.responseFormat) b.response_format = req.responseFormat;
    if (req.tools?.length) {
      b.tools = req.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters ?? { type: 'object' } },
      }));
    }
    if (req.toolChoice !== undefined) {
      b.tool_choice =
        typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', function: { name: req.toolChoice.name } };
    }
    return b;
  }

  private async connect(body: string, signal?: AbortSignal, accept = 'text/event-stream', silenceFactor = 1) {
    const url = this.opts.baseUrl.replace(/\/+$/, '') + '/chat/completions';
    const timeout = (this.opts.timeoutMs ?? 60_000) * silenceFactor;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    // A completion changes nothing upstream: retrying it is safe (idempotent), before the first byte is used.
    const policy = { idempotent: true };
    return retrying<PostResponse>({ maxRetries: this.opts.maxRetries ?? 2, baseMs: this.opts.retryBaseMs ?? 250, signal }, async () => {
      try {
        const res = await post(url, { headers, body, signal, timeoutMs: timeout });
        if (res.statusCode >= 200 && res.statusCode < 300) return { value: res };
        const text = await readText(res.body).catch(() => '');
        const overflow = parseContextOverflow(res.statusCode, text);
        // A prompt too large for the model stays too large: never retried.
        if (overflow) return { failure: overflow, retry: false };
        const retry = shouldRetry({ status: res.statusCode }, policy);
        const failure = new ProviderError(`provider answered ${res.statusCode}: ${errorText(text)}`, {
          retryable: retry,
          status: res.statusCode === 429 ? 503 : 502,
          upstreamStatus: res.statusCode,
          providerCode: errorCode(text),
        });
        return { failure, retry, retryAfter: header(res.headers['retry-after']) };
      } catch (err) {
        const failure = this.wrap(err, signal);
        return { failure, retry: failure instanceof ProviderError && shouldRetry({ error: err }, policy) };
      }
    });
  }

  private wrap(err: unknown, signal?: AbortSignal): ProviderError | CancelledError | ContextOverflowError {
    if (err instanceof ProviderError || err instanceof CancelledError || err instanceof ContextOverflowError) return err;
    if (signal?.aborted || (err as { name?: string }).name === 'AbortError') return new CancelledError();
    return new ProviderError(`cannot reach the model provider at ${this.opts.baseUrl}: ${(err as Error).message}`, {
      retryable: shouldRetry({ error: err }, { idempotent: true }),
      cause: err,
      // A timeout or a refused, reset or unknown host, by the error's code; anything else on the way there is a connection failure.
      failure: transportFailure(err) ?? 'connection',
      hint: 'check the provider URL with `mgpt models`, or that the model server is running',
    });
  }
}

interface ImageCompletion {
  choices?: Array<{ message?: { images?: Array<{ image_url?: { url?: string } }> } }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** How much longer than a stream's silence a reply asked in one piece may take (the route's timeoutMs times this). */
const WHOLE_REPLY_SILENCE = 5;

interface WholeCompletion {
  choices?: Array<{
    message?: { content?: string | null; tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> };
    finish_reason?: string | null;
  }>;
  usage?: OpenAIChunk['usage'];
  timings?: OpenAIChunk['timings'];
  error?: ProviderErrorBody;
}

/** A whole completion's parts, in a stream's order: text, tool calls, usage, the finish reason. */
function* wholeParts(json: WholeCompletion): Generator<StreamPart> {
  if (json.error) throw streamOverflow(json.error) ?? inBodyError(json.error);
  const choice = json.choices?.[0];
  if (!choice) throw new ProviderError('provider sent a completion without choices');
  const text = choice.message?.content;
  if (typeof text === 'string' && text.length > 0) yield { type: 'text-delta', text };
  for (const t of choice.message?.tool_calls ?? []) yield { type: 'tool-call', callId: t.id ?? '', name: t.function?.name ?? '', arguments: t.function?.arguments ?? '' };
  if (json.usage) yield { type: 'usage', usage: usageOf(json.usage, json.timings) };
  yield { type: 'finish', reason: choice.finish_reason ?? 'stop' };
}

/** The usage a provider reported, with the cached prompt tokens when it told them (OpenAI's field, else llama-server's timings). */
function usageOf(u: NonNullable<OpenAIChunk['usage']>, timings?: OpenAIChunk['timings']): ProviderUsage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? timings?.cache_n;
  return { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0, ...(typeof cached === 'number' ? { cachedTokens: cached } : {}) };
}

interface OpenAIChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  /** llama-server's own counts: `cache_n` prompt tokens came from its cache. */
  timings?: { cache_n?: number };
  error?: ProviderErrorBody;
}

/** An error the provider sent inside a 200 (a stream's chunk or a whole completion), with its own code and status when it gave them. */
function inBodyError(error: ProviderErrorBody): ProviderError {
  const status = typeof error.code === 'number' ? error.code : undefined;
  return new ProviderError(`provider error: ${error.message ?? JSON.stringify(error)}`, {
    upstreamStatus: status !== undefined && status >= 400 && status < 600 ? status : undefined,
    providerCode: codeOf(error),
  });
}

/** What OpenAI-compatible servers put in `error`: OpenAI a string `code` and `type`, llama-server a numeric `code`. */
interface ProviderErrorBody {
  message?: string;
  code?: unknown;
  type?: unknown;
}

function codeOf(error: ProviderErrorBody): string | undefined {
  if (typeof error.code === 'string' && error.code !== '') return error.code;
  return typeof error.type === 'string' && error.type !== '' ? error.type : undefined;
}

/** The provider's own error code in an error body, when it is JSON and names one. */
function errorCode(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as { error?: ProviderErrorBody | string };
    return typeof j.error === 'object' && j.error !== null ? codeOf(j.error) : undefined;
  } catch {
    return undefined;
  }
}

export function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string; detail?: string };
    if (typeof j.error === 'string') return j.error;
    if (j.error?.message) return j.error.message;
    if (j.detail) return j.detail;
  } catch {
    // not JSON: show the start of the text
  }
  return body.slice(0, 200) || '(empty body)';
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** What a stream has said beyond its text: tool calls assembled from their pieces, and the finish reason. */
interface ChunkState {
  tools: Map<number, { id: string; name: string; arguments: string }>;
  finish: string;
}

/** Reads the SSE body to [DONE], yielding text and usage; a stream that ends before [DONE] throws (retryable). */
async function* readStream(body: AsyncIterable<unknown>, state: ChunkState): AsyncGenerator<StreamPart> {
  const decoder = new SseDecoder();
  const utf8 = new TextDecoder();
  let done = false;
  let after = 0;
  for await (const piece of body) {
    if (done) {
      // After [DONE] only the end of the response is left. Reading it to the end returns the
      // connection to the pool; breaking off would tear it down (a new connection every turn).
      after += (piece as Buffer).length;
      if (after > 64 * 1024) break;
      continue;
    }
    done = yield* handlePayloads(decoder.push(utf8.decode(piece as Buffer, { stream: true })), state);
  }
  if (!done && !(yield* handlePayloads(decoder.flush(), state))) {
    throw new ProviderError('provider stream ended before [DONE]', { retryable: true });
  }
}

/** Yields the parts of some SSE payloads; true once [DONE] is among them. */
function* handlePayloads(payloads: string[], state: ChunkState): Generator<StreamPart, boolean> {
  for (const data of payloads) {
    if (data === '[DONE]') return true;
    let chunk: OpenAIChunk;
    try {
      chunk = JSON.parse(data) as OpenAIChunk;
    } catch {
      throw new ProviderError(`provider sent a malformed stream chunk: ${data.slice(0, 80)}`);
    }
    if (chunk.error) throw streamOverflow(chunk.error) ?? inBodyError(chunk.error);
    for (const choice of chunk.choices ?? []) {
      const d = choice.delta ?? {};
      if (typeof d.content === 'string' && d.content.length > 0) yield { type: 'text-delta', text: d.content };
      for (const tc of d.tool_calls ?? []) {
        const cur = state.tools.get(tc.index ?? 0) ?? { id: '', name: '', arguments: '' };
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.name += tc.function.name;
        if (tc.function?.arguments) cur.arguments += tc.function.arguments;
        state.tools.set(tc.index ?? 0, cur);
      }
      if (choice.finish_reason) state.finish = choice.finish_reason;
    }
    if (chunk.usage) yield { type: 'usage', usage: usageOf(chunk.usage, chunk.timings) };
  }
  return false;
}

/** Fields of the request body the caller may not set through `extra`: the provider owns them. */
const OWN_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'tools', 'tool_choice', 'n']);

/** The sampling fields of the request body: the request's, within the route's ceiling and defaults. */
export function samplingFields(req: ChatRequest, limits: RouteLimits): Record<string, unknown> {
  const s = req.sampling ?? {};
  const b: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.extra ?? {})) if (!OWN_FIELDS.has(k)) b[k] = v;
  const maxTokens = req.maxTokens ?? ceiling(s.maxTokens, limits.maxTokens);
  const fields: Record<string, unknown> = {
    max_tokens: maxTokens,
    temperature: req.temperature ?? s.temperature ?? limits.temperature,
    top_p: s.topP,
    stop: s.stop,
    seed: s.seed,
    presence_penalty: s.presencePenalty,
    frequency_penalty: s.frequencyPenalty,
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) b[k] = v;
  return b;
}

