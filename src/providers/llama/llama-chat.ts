import { availableParallelism } from 'node:os';
import { CancelledError, ContextOverflowError, MgptError, ProviderError } from '../../core/errors.js';
import type { ChatMessage, ChatModel, ChatRequest, RouteLimits, StreamPart } from '../spec.js';

export interface LlamaOptions {
  /** Path of the GGUF file. */
  gguf: string;
  threads?: number;
  contextSize?: number;
  temperature?: number;
  /** Longest reply when the request sets none. */
  maxTokens?: number;
}

export const LLAMA_DEFAULTS = { contextSize: 2048, temperature: 0.8, maxTokens: 256 } as const;
export const LLAMA_INSTALL = 'npm install --ignore-scripts --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1';

/**
 * Threads when none are configured: one core stays with Node's own thread (streams, SQLite, HTTP);
 * more threads than cores makes llama.cpp hundreds of times slower, never faster.
 */
export function defaultThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(8, cores - 1));
}

/** The chat template for models that carry none: a plain transcript. */
export const PLAIN_TEMPLATE = {
  template: '{{systemPrompt}}\n\n{{history}}Assistant: {{completion}}\nUser: ',
  historyTemplate: { system: '{{message}}\n\n', user: 'User: {{message}}\n', model: 'Assistant: {{message}}\n' },
} as const;

type Lib = typeof import('node-llama-cpp');
type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;

interface Loaded {
  lib: Lib;
  model: import('node-llama-cpp').LlamaModel;
  chat: import('node-llama-cpp').LlamaChat;
  wrapper: import('node-llama-cpp').ChatWrapper;
  contextSize: number;
  /** One generation at a time on the one context sequence. */
  turn: Promise<void>;
}

/** Models stay loaded for the life of the process, one per file and settings. */
const loadedModels = new Map<string, Promise<Loaded>>();

async function importLib(): Promise<Lib> {
  try {
    return await import('node-llama-cpp');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new MgptError('the llama provider needs node-llama-cpp, which is not installed', {
        hint: `install it next to mgpt (about 85 MB, CPU only): ${LLAMA_INSTALL}`,
      });
    }
    throw err;
  }
}

function load(opts: Required<Pick<LlamaOptions, 'gguf' | 'threads' | 'contextSize'>>): Promise<Loaded> {
  const key = `${opts.gguf}\0${opts.threads}\0${opts.contextSize}`;
  let p = loadedModels.get(key);
  if (!p) {
    p = (async (): Promise<Loaded> => {
      const lib = await importLib();
      let llama: import('node-llama-cpp').Llama;
      try {
        llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error, maxThreads: opts.threads });
      } catch (err) {
        throw new ProviderError(`node-llama-cpp has no working build for this machine: ${(err as Error).message}`, {
          hint: `reinstall it: ${LLAMA_INSTALL}`,
        });
      }
      let model: import('node-llama-cpp').LlamaModel;
      try {
        model = await llama.loadModel({ modelPath: opts.gguf });
      } catch (err) {
        throw new ProviderError(`cannot load the GGUF model ${opts.gguf}: ${(err as Error).message}`, {
          hint: 'check the path with: mgpt models',
        });
      }
      const context = await model.createContext({ contextSize: opts.contextSize, threads: opts.threads });
      // The model's own chat template when it carries one; otherwise a plain transcript.
      const wrapper = model.fileInfo.metadata?.tokenizer?.chat_template
        ? lib.resolveChatWrapper(model)
        : new lib.TemplateChatWrapper(PLAIN_TEMPLATE);
      const chat = new lib.LlamaChat({ contextSequence: context.getSequence(), chatWrapper: wrapper });
      return { lib, model, chat, wrapper, contextSize: context.contextSize, turn: Promise.resolve() };
    })();
    loadedModels.set(key, p);
    // A failed load is not cached: fixing the path or installing the library takes effect at once.
    p.catch(() => loadedModels.delete(key));
  }
  return p;
}

/** The engine's messages as node-llama-cpp chat history, ending with the reply to generate. */
function history(messages: ChatMessage[]): ChatHistoryItem[] {
  const text = (c: ChatMessage['content']) =>
    typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
  const items: ChatHistoryItem[] = [];
  for (const m of messages) {
    if (m.role === 'system') items.push({ type: 'system', text: m.content });
    else if (m.role === 'user') items.push({ type: 'user', text: text(m.content) });
    else if (m.role === 'assistant') {
      if (m.content) items.push({ type: 'model', response: [m.content] });
    } else items.push({ type: 'user', text: `Tool result (${m.tool_call_id}): ${m.content}` });
  }
  items.push({ type: 'model', response: [] });
  return items;
}

/**
 * A GGUF model in-process on node-llama-cpp (CPU). Loaded once per process, on first use; the
 * library itself is an optional install. Text only: tool definitions and response formats are not
 * passed to the model.
 */
export class LlamaChatModel implements ChatModel {
  readonly provider = 'llama';
  readonly modelId: string;
  readonly routeKey: string;
  readonly limits: RouteLimits;

  constructor(private readonly opts: LlamaOptions) {
    this.modelId = opts.gguf;
    this.routeKey = `llama:${opts.gguf}`;
    // The context is the one this provider creates, so it is known without learning.
    this.limits = {
      contextSize: opts.contextSize ?? LLAMA_DEFAULTS.contextSize,
      maxTokens: opts.maxTokens ?? LLAMA_DEFAULTS.maxTokens,
      temperature: opts.temperature ?? LLAMA_DEFAULTS.temperature,
    };
  }

  async *stream(req: ChatRequest): AsyncIterable<StreamPart> {
    const m = await load({
      gguf: this.opts.gguf,
      threads: this.opts.threads ?? defaultThreads(),
      contextSize: this.opts.contextSize ?? LLAMA_DEFAULTS.contextSize,
    });
    // Wait for the generation before this one; then hold the sequence until this one settles.
    let release!: () => void;
    const previous = m.turn;
    m.turn = new Promise<void>((r) => (release = r));
    await previous;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) stop.abort();
    let generation: Promise<unknown> | undefined;
    try {
      if (stop.signal.aborted) throw new CancelledError();
      const chatHistory = history(req.messages);
      const promptTokens = m.wrapper.generateContextState({ chatHistory }).contextText.tokenize(m.model.tokenizer).length;
      const room = m.contextSize - promptTokens - 1;
      if (room < 1) {
        throw new ContextOverflowError(`the prompt is ${promptTokens} tokens, but the llama context holds ${m.contextSize}`, {
          contextTokens: m.contextSize,
          promptTokens,
          hint: 'raise the context (mgpt models add NAME ... --context N) or shorten the message',
        });
      }
      const maxTokens = Math.min(req.maxTokens ?? this.opts.maxTokens ?? LLAMA_DEFAULTS.maxTokens, room);
      // Text arrives through a callback; the queue hands it to this generator as it comes.
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      let finished = false;
      let failure: unknown;
      let outputTokens = 0;
      let stopReason = 'stop';
      generation = m.chat
        .generateResponse(chatHistory, {
          maxTokens,
          temperature: req.temperature ?? this.opts.temperature ?? LLAMA_DEFAULTS.temperature,
          signal: stop.signal,
          onTextChunk: (t) => {
            queue.push(t);
            wake?.();
          },
          onToken: (tokens) => (outputTokens += tokens.length),
        })
        .then(
          (r) => {
            if (r.metadata.stopReason === 'maxTokens') stopReason = 'length';
          },
          (err) => (failure = err),
        )
        .finally(() => {
          finished = true;
          wake?.();
        });
      for (;;) {
        if (queue.length) {
          yield { type: 'text-delta', text: queue.splice(0).join('') };
          continue;
        }
        if (finished) break;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
      if (stop.signal.aborted) throw new CancelledError();
      if (failure) throw new ProviderError(`llama generation failed: ${(failure as Error).message}`, { cause: failure });
      yield { type: 'usage', usage: { inputTokens: promptTokens, outputTokens } };
      yield { type: 'finish', reason: stopReason };
    } finally {
      // A consumer that stopped reading, or a cancel: stop generating before giving the sequence back.
      stop.abort();
      await generation;
      req.signal?.removeEventListener('abort', onAbort);
      release();
    }
  }
}
