import { availableParallelism } from 'node:os';
import { CancelledError, ContextOverflowError, MgptError, ProviderError } from '../../core/errors.js';
import type { ChatModel, ChatRequest, RouteLimits, StreamPart } from '../spec.js';
import { ceiling } from '../../core/models.js';
import { callTokens, finishReason, type GenerateOptions, generate, type Phase } from './llama-generate.js';
import { GrammarCache, outputContract } from './llama-grammar.js';
import { llamaGpu, llamaInstallCommand } from './llama-install.js';
import { toChatHistory } from './llama-history.js';
import { assertCanCallFunctions, forcingCalls, toolCallPart, toolPlan } from './llama-tools.js';

export interface LlamaOptions {
  /** Path of the GGUF file. */
  gguf: string;
  threads?: number;
  contextSize?: number;
  temperature?: number;
  /** Longest reply when the request sets none. */
  maxTokens?: number;
}

import { LLAMA_DEFAULTS } from '../../core/models.js';

export { LLAMA_DEFAULTS };

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
type LlamaChat = import('node-llama-cpp').LlamaChat;

interface Loaded {
  lib: Lib;
  model: import('node-llama-cpp').LlamaModel;
  chat: LlamaChat;
  /** The same sequence and template, with every reply starting inside a function call. */
  forcedChat: LlamaChat;
  wrapper: import('node-llama-cpp').ChatWrapper;
  grammars: GrammarCache;
  contextSize: number;
  /** One generation at a time on the one context sequence. */
  turn: Promise<void>;
}

/** Models stay loaded for the life of the process, one per file and settings. */
const loadedModels = new Map<string, Promise<Loaded>>();

export async function importLib(): Promise<Lib> {
  try {
    return await import('node-llama-cpp');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new MgptError('the llama provider needs node-llama-cpp, which is not installed', {
        hint: `install it next to mgpt: ${llamaInstallCommand()}`,
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
        llama = await lib.getLlama({ gpu: llamaGpu(), build: 'never', logLevel: lib.LlamaLogLevel.error, maxThreads: opts.threads });
      } catch (err) {
        throw new ProviderError(`node-llama-cpp has no working build for this machine: ${(err as Error).message}`, {
          hint: `reinstall it: ${llamaInstallCommand()}`,
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
      const sequence = context.getSequence();
      const chat = new lib.LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
      const forcedChat = new lib.LlamaChat({ contextSequence: sequence, chatWrapper: forcingCalls(lib, wrapper) });
      const grammars = new GrammarCache(llama);
      return { lib, model, chat, forcedChat, wrapper, grammars, contextSize: context.contextSize, turn: Promise.resolve() };
    })();
    loadedModels.set(key, p);
    // A failed load is not cached: fixing the path or installing the library takes effect at once.
    p.catch(() => loadedModels.delete(key));
  }
  return p;
}

/**
 * The generations a request needs, after refusing what this model cannot do. Tools and a response
 * format together take two: a probe with the functions, stopped at its first text, and only when it
 * made no call, the reply under the grammar.
 */
async function planPhases(m: Loaded, req: ChatRequest): Promise<{ probe?: Phase; main: Phase }> {
  const tools = toolPlan(req.tools, req.toolChoice);
  if (tools) assertCanCallFunctions(m.wrapper);
  const contract = outputContract(req.responseFormat);
  // A forced call is the whole reply, so a response format has nothing left to shape.
  const grammar = contract && !tools?.force ? await m.grammars.get(contract) : undefined;
  if (!tools) return { main: { chat: m.chat, grammar } };
  const calling: Phase = { chat: tools.force ? m.forcedChat : m.chat, functions: tools.functions };
  return grammar ? { probe: { ...calling, probe: true }, main: { chat: m.chat, grammar } } : { main: calling };
}

/** The prompt's size in the model's tokens, with the functions documented as the phase sends them. */
function promptTokens(m: Loaded, chatHistory: ChatHistoryItem[], phase: Phase): number {
  const state = m.wrapper.generateContextState({ chatHistory, availableFunctions: phase.functions, documentFunctionParams: true });
  return state.contextText.tokenize(m.model.tokenizer).length;
}

function assertFits(m: Loaded, tokens: number): void {
  if (m.contextSize - tokens - 1 < 1) {
    throw new ContextOverflowError(`the prompt is ${tokens} tokens, but the llama context holds ${m.contextSize}`, {
      contextTokens: m.contextSize,
      promptTokens: tokens,
      hint: 'raise the context (mgpt models add NAME ... --context N) or shorten the message',
    });
  }
}

/** Waits for the generation before this one; the returned function gives the sequence back. */
async function takeTurn(m: Loaded): Promise<() => void> {
  let release!: () => void;
  const previous = m.turn;
  m.turn = new Promise<void>((r) => (release = r));
  await previous;
  return release;
}

/**
 * A GGUF model in-process on node-llama-cpp (CPU). Loaded once per process, on first use; the
 * library itself is an optional install. A response format becomes a grammar the reply cannot leave;
 * tools become node-llama-cpp functions in the model's template syntax.
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

  /** The model's chat template decides: without a syntax for function calls it cannot call tools. */
  async toolSupport(): Promise<string | null> {
    const m = await load({
      gguf: this.opts.gguf,
      threads: this.opts.threads ?? defaultThreads(),
      contextSize: this.opts.contextSize ?? LLAMA_DEFAULTS.contextSize,
    });
    try {
      assertCanCallFunctions(m.wrapper);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  async *stream(req: ChatRequest): AsyncIterable<StreamPart> {
    const m = await load({
      gguf: this.opts.gguf,
      threads: this.opts.threads ?? defaultThreads(),
      contextSize: this.opts.contextSize ?? LLAMA_DEFAULTS.contextSize,
    });
    const { probe, main } = await planPhases(m, req);
    const release = await takeTurn(m);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) stop.abort();
    try {
      if (stop.signal.aborted) throw new CancelledError();
      const history = toChatHistory(req.messages);
      const probePrompt = probe ? promptTokens(m, history, probe) : 0;
      const mainPrompt = promptTokens(m, history, main);
      const largest = Math.max(probePrompt, mainPrompt);
      assertFits(m, largest);
      const usage = { inputTokens: 0, outputTokens: 0 };
      const o: GenerateOptions = {
        ...sampling(req),
        maxTokens: Math.min(req.maxTokens ?? ceiling(req.sampling?.maxTokens, this.opts.maxTokens) ?? LLAMA_DEFAULTS.maxTokens, m.contextSize - largest - 1),
        temperature: req.temperature ?? req.sampling?.temperature ?? this.opts.temperature ?? LLAMA_DEFAULTS.temperature,
        signal: stop.signal,
        onTokens: (n) => (usage.outputTokens += n),
      };
      let result = probe ? yield* generate(history, probe, o) : undefined;
      usage.inputTokens = probePrompt;
      if (!result?.functionCalls?.length) {
        result = yield* generate(history, main, o);
        usage.inputTokens += mainPrompt;
      }
      usage.outputTokens += callTokens(m.lib, m.model.tokenizer, result);
      for (const call of result.functionCalls ?? []) yield toolCallPart(call);
      yield { type: 'usage', usage };
      yield { type: 'finish', reason: finishReason(result) };
    } finally {
      stop.abort();
      req.signal?.removeEventListener('abort', onAbort);
      release();
    }
  }
}

/** The request's sampling node-llama-cpp takes (`extra` fields are for OpenAI-compatible servers). */
function sampling(req: ChatRequest): Pick<GenerateOptions, 'topP' | 'seed' | 'stop' | 'presencePenalty' | 'frequencyPenalty'> {
  const s = req.sampling ?? {};
  return { topP: s.topP, seed: s.seed, stop: s.stop, presencePenalty: s.presencePenalty, frequencyPenalty: s.frequencyPenalty };
}
