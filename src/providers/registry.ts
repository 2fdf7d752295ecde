import { ConfigError } from '../core/errors.js';
import { EchoChatModel } from './echo/echo.js';
import type { ChatModel, EmbeddingModel, ModelRoute, RouteLimits } from './spec.js';

export const PROVIDERS = ['echo', 'openai', 'llama'] as const;

function routeLimits(route: ModelRoute): RouteLimits {
  return { contextSize: route.contextSize, maxTokens: route.maxTokens, temperature: route.temperature, sharedSlots: route.sharedSlots };
}

/** Builds the ChatModel a route names; heavy providers are imported only when used. */
export async function createChatModel(platformId: string, route: ModelRoute): Promise<ChatModel> {
  switch (route.provider) {
    case 'echo':
      return new EchoChatModel(route.model ?? platformId, routeLimits(route));
    case 'openai': {
      if (!route.baseUrl) {
        throw new ConfigError(`model ${platformId} is routed to the openai provider without a base URL`, {
          hint: `set one: mgpt config set models.${platformId}.baseUrl http://127.0.0.1:11434/v1 (or MGPT_PROVIDER_URL)`,
        });
      }
      const { OpenAIChatModel } = await import('./openai/openai-chat.js');
      return new OpenAIChatModel({
        baseUrl: route.baseUrl,
        model: route.model ?? platformId,
        apiKey: route.apiKey,
        timeoutMs: route.timeoutMs,
        maxRetries: route.maxRetries,
        ...routeLimits(route),
      });
    }
    case 'llama': {
      if (!route.gguf) {
        throw new ConfigError(`model ${platformId} is routed to the llama provider without a GGUF file`, {
          hint: `add one: mgpt models add NAME --provider llama --gguf PATH --route ${platformId}`,
        });
      }
      // node-llama-cpp is an optional install, imported only here.
      const { LlamaChatModel } = await import('./llama/llama-chat.js');
      return new LlamaChatModel({
        gguf: route.gguf,
        threads: route.threads,
        contextSize: route.contextSize,
        temperature: route.temperature,
        maxTokens: route.maxTokens,
      });
    }
    default:
      throw new ConfigError(`unknown provider ${JSON.stringify(route.provider)} for model ${platformId}`, {
        hint: `known providers: ${PROVIDERS.join(', ')}`,
      });
  }
}

/**
 * The embedding model a route opted in to (its `embeddings`), or undefined when it has none. The
 * engine checks the route first (embedding-route.ts): here it is well formed.
 */
export async function createEmbeddingModel(route: ModelRoute): Promise<EmbeddingModel | undefined> {
  const e = route.embeddings;
  if (!e) return undefined;
  const baseUrl = e.baseUrl ?? route.baseUrl;
  if (route.provider === 'openai' && e.model && baseUrl) {
    const { OpenAIEmbeddingModel } = await import('./openai/openai-embeddings.js');
    return new OpenAIEmbeddingModel({ baseUrl, model: e.model, apiKey: route.apiKey, dimensions: e.dimensions, maxRetries: route.maxRetries });
  }
  const gguf = e.gguf ?? route.gguf;
  if (route.provider === 'llama' && gguf) {
    // node-llama-cpp is an optional install, imported only here.
    const { LlamaEmbeddingModel } = await import('./llama/llama-embeddings.js');
    return new LlamaEmbeddingModel({ gguf, threads: route.threads });
  }
  return undefined;
}
