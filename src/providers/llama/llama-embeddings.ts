import { basename } from 'node:path';
import { ProviderError } from '../../core/errors.js';
import type { EmbeddingModel } from '../spec.js';
import { importLib } from './llama-chat.js';
import { llamaGpu, llamaInstallCommand } from './llama-install.js';

export interface LlamaEmbeddingOptions {
  /** The embedding model's GGUF file. */
  gguf: string;
  threads?: number;
}

interface Loaded {
  context: import('node-llama-cpp').LlamaEmbeddingContext;
  model: import('node-llama-cpp').LlamaModel;
  /** The most tokens one text is embedded from: the context's. */
  contextSize: number;
  /** One text at a time on the one context. */
  queue: Promise<unknown>;
}

/** The longest context an embedding context is given: chat messages, never whole documents. */
const EMBED_CONTEXT = 2048;

/** Embedding contexts stay loaded for the life of the process, one per file. */
const loaded = new Map<string, Promise<Loaded>>();

/** A local GGUF embedding model through node-llama-cpp (an optional install, like the llama chat provider). */
export class LlamaEmbeddingModel implements EmbeddingModel {
  readonly name: string;

  constructor(private readonly opts: LlamaEmbeddingOptions) {
    this.name = `gguf:${basename(opts.gguf)}`;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const m = await load(this.opts);
    const out: Float32Array[] = [];
    for (const text of texts) {
      if (signal?.aborted) throw signal.reason;
      out.push(await one(m, text));
    }
    return out;
  }
}

/** One text's vector, its tokens cut to the context, after whatever the context is busy with. */
function one(m: Loaded, text: string): Promise<Float32Array> {
  const run = m.queue.then(async () => {
    // Under the context with room for the begin and end tokens node-llama-cpp adds.
    const tokens = m.model.tokenize(text).slice(0, m.contextSize - 3);
    const e = await m.context.getEmbeddingFor(tokens);
    return Float32Array.from(e.vector);
  });
  m.queue = run.catch(() => undefined);
  return run;
}

function load(opts: LlamaEmbeddingOptions): Promise<Loaded> {
  let p = loaded.get(opts.gguf);
  if (!p) {
    p = open(opts);
    loaded.set(opts.gguf, p);
    // A failed load is not kept: fixing the path takes effect at once.
    p.catch(() => loaded.delete(opts.gguf));
  }
  return p;
}

async function open(opts: LlamaEmbeddingOptions): Promise<Loaded> {
  const lib = await importLib();
  let model: import('node-llama-cpp').LlamaModel;
  try {
    const llama = await lib.getLlama({ gpu: llamaGpu(), build: 'never', logLevel: lib.LlamaLogLevel.error, maxThreads: opts.threads });
    model = await llama.loadModel({ modelPath: opts.gguf });
  } catch (err) {
    throw new ProviderError(`embeddings: cannot load the GGUF model ${opts.gguf}: ${(err as Error).message}`, {
      hint: `check the path with: mgpt models (node-llama-cpp: ${llamaInstallCommand()})`,
    });
  }
  const contextSize = Math.min(EMBED_CONTEXT, model.trainContextSize);
  const context = await model.createEmbeddingContext({ contextSize, threads: opts.threads });
  return { context, model, contextSize, queue: Promise.resolve() };
}
