import { CancelledError, ProviderError } from '../../core/errors.js';
import type { StreamPart } from '../spec.js';

type Lib = typeof import('node-llama-cpp');
type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;
type LlamaChat = import('node-llama-cpp').LlamaChat;
export type LlamaChatResponse = import('node-llama-cpp').LlamaChatResponse<import('node-llama-cpp').ChatModelFunctions>;

/** One generation on the sequence: node-llama-cpp takes a grammar or functions, never both. */
export interface Phase {
  chat: LlamaChat;
  functions?: import('node-llama-cpp').ChatModelFunctions;
  grammar?: import('node-llama-cpp').LlamaGrammar;
  /** Its text is not the reply: it only finds out whether the model calls a function. */
  probe?: boolean;
}

export interface GenerateOptions {
  maxTokens: number;
  temperature: number;
  topP?: number;
  seed?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  signal: AbortSignal;
  /** Every token the model generates, text or call. */
  onTokens: (n: number) => void;
}

/**
 * Runs one phase, yielding its text as it comes (none for a probe) and returning the result.
 * Text arrives through a callback; the queue hands it to this generator.
 */
export async function* generate(history: ChatHistoryItem[], phase: Phase, o: GenerateOptions): AsyncGenerator<StreamPart, LlamaChatResponse> {
  const probeStop = new AbortController();
  const signal = AbortSignal.any([o.signal, probeStop.signal]);
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let outcome: { result: LlamaChatResponse } | { failure: unknown } | undefined;
  const onTextChunk = (t: string) => {
    if (phase.probe) {
      if (t.trim()) probeStop.abort();
      return;
    }
    queue.push(t);
    wake?.();
  };
  const generation = phase.chat
    .generateResponse(history, {
      maxTokens: o.maxTokens,
      temperature: o.temperature,
      ...samplingOptions(o),
      signal,
      stopOnAbortSignal: phase.probe,
      onTextChunk,
      onToken: (tokens: readonly unknown[]) => o.onTokens(tokens.length),
      ...(phase.functions ? { functions: phase.functions, documentFunctionParams: true } : { grammar: phase.grammar }),
    } as Parameters<LlamaChat['generateResponse']>[1])
    .then(
      (result: unknown) => (outcome = { result: result as LlamaChatResponse }),
      (failure: unknown) => (outcome = { failure }),
    )
    .finally(() => wake?.());
  try {
    for (;;) {
      if (queue.length) {
        const text = queue.splice(0).join('');
        if (text) yield { type: 'text-delta', text };
        continue;
      }
      if (outcome) break;
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  } finally {
    // A consumer that stopped reading, or a cancel: stop generating before giving the sequence back.
    if (!outcome) probeStop.abort();
    await generation;
  }
  if (o.signal.aborted) throw new CancelledError();
  if ('failure' in outcome) throw new ProviderError(`llama generation failed: ${(outcome.failure as Error).message}`, { cause: outcome.failure });
  return outcome.result;
}

export function finishReason(result: LlamaChatResponse): string {
  if (result.functionCalls?.length) return 'tool_calls';
  return result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
}

/** Call tokens never reach onToken; they count as the text of the call in the template's syntax. */
export function callTokens(lib: Lib, tokenizer: import('node-llama-cpp').Tokenizer, result: LlamaChatResponse): number {
  let n = 0;
  for (const call of result.functionCalls ?? []) n += lib.LlamaText.fromJSON(call.raw).tokenize(tokenizer).length;
  return n;
}

/** The request's optional sampling, in node-llama-cpp's terms (penalties through its repeat penalty). */
function samplingOptions(o: GenerateOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.topP !== undefined) out.topP = o.topP;
  if (o.seed !== undefined) out.seed = o.seed;
  if (o.stop?.length) out.customStopTriggers = o.stop;
  if (o.presencePenalty !== undefined || o.frequencyPenalty !== undefined) {
    out.repeatPenalty = { presencePenalty: o.presencePenalty ?? 0, frequencyPenalty: o.frequencyPenalty ?? 0 };
  }
  return out;
}
