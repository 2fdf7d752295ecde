/** The provider spec: types only. A provider turns a prompt into a stream of typed parts. */

export type { ModelRoute, RouteLimits } from '../core/models.js';
import type { RouteLimits } from '../core/models.js';

export type { ChatContentPart, ChatMessage, ChatToolCall, Sampling, ToolChoice, ToolDefinition } from '../core/chat.js';
import type { ChatMessage, Sampling, ToolChoice, ToolDefinition } from '../core/chat.js';

export interface ChatRequest {
  messages: ChatMessage[];
  /** Per-request sampling; `maxTokens`/`temperature` below are the engine's own (summaries). */
  sampling?: Sampling;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** OpenAI `response_format` shape, passed through. */
  responseFormat?: Record<string, unknown>;
  maxTokens?: number;
  temperature?: number;
  /** What the call is for; providers may use it (echo summarizes), most ignore it. */
  purpose?: 'reply' | 'summary';
  /**
   * Nobody watches this reply arrive (a request with `stream: false`): a provider may answer it in
   * one piece, which costs a server less than a stream. The parts are the same, the text in one delta.
   */
  buffered?: boolean;
  /**
   * Run with no other request on the route (a retry after a context shared by parallel requests
   * ran out): only the engine's gate reads it; providers ignore it.
   */
  alone?: boolean;
  signal?: AbortSignal;
}

export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of the input, what the provider's prompt cache served (OpenAI's cached_tokens, llama-server's cache_n), when it said. */
  cachedTokens?: number;
}

export type StreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; callId: string; name: string; arguments: string }
  | { type: 'usage'; usage: ProviderUsage }
  | { type: 'finish'; reason: string }
  | { type: 'error'; error: Error };

/** What a server says of its context (llama-server's `/props`). */
export interface ServerContext {
  /** A request's context: on a server whose slots share one context, all of it. */
  contextTokens: number;
  /** How many requests it runs at once (`total_slots`), when it says. */
  slots?: number;
}

export interface ImageGenerationRequest {
  /** System prompt, then one user message whose parts are in the order the seed gives. */
  messages: ChatMessage[];
  imageSize: '1K' | '2K' | '4K';
  aspectRatio: string;
  signal?: AbortSignal;
}

export interface GeneratedImage {
  mimeType: string;
  /** base64 */
  data: string;
}

export interface ChatModel {
  /** Provider name (`echo`, `openai`, ...). */
  readonly provider: string;
  /** The provider's own model name. */
  readonly modelId: string;
  /**
   * Identifies the model behind the route (provider, server, model), so what is learned about it
   * (its context, how it counts tokens) is kept per model and shared by every id routed to it.
   */
  readonly routeKey: string;
  /** The route's configured limits; a provider that knows its context (llama) fills it in. */
  readonly limits: RouteLimits;
  /** Streams the reply. Retries happen inside, and only before the first part is yielded. */
  stream(request: ChatRequest): AsyncIterable<StreamPart>;
  /**
   * Why this model cannot call tools (a reason to show), or null when it can. Absent: it can (the
   * OpenAI-compatible provider sends tools as they are and lets the server refuse them).
   */
  toolSupport?(): Promise<string | null>;
  /**
   * The context the server says it has now, per request (llama-server's `/props` n_ctx), and how
   * many requests it runs at once, or undefined when it does not say. Asked when a rotation would
   * rest on a learned context (a server restarted with another `-c` is seen without sending it a
   * prompt), and once per process for a route whose context is shared, for its slots.
   */
  serverContext?(signal?: AbortSignal): Promise<ServerContext | undefined>;
  /** Image output, for providers that have it. */
  generateImage?(request: ImageGenerationRequest): Promise<{ images: GeneratedImage[]; usage?: ProviderUsage }>;
}

/** A model that turns texts into vectors (semantic recall): a route offers one when it opts in. */
export interface EmbeddingModel {
  /**
   * Names the vectors' space (the model, and the length asked for): vectors stored under another
   * name are from another model, are never compared with this one's, and are embedded again.
   */
  readonly name: string;
  /** One vector per text, in the texts' order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
