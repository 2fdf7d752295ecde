// The llama provider: tokens per second through the engine, against node-llama-cpp called directly.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openEngineSync } from '../src/engine/open-engine.js';
import { PLAIN_TEMPLATE } from '../src/providers/llama/llama-chat.js';
import { llamaGpu } from '../src/providers/llama/llama-install.js';

export interface LlamaBench {
  engineTps: number;
  directTps: number;
  /** Median of the per-pair ratios engine / direct. */
  ratio: number;
  tokens: number;
}

/** The tiny model beside the project, as the tests find it; null when it is not there. */
export function benchGguf(root: string): string | null {
  for (const p of [process.env.MGPT_TEST_GGUF, join(root, '..', 'shared', 'models', 'stories260K.gguf')]) if (p && existsSync(p)) return p;
  return null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchLlama(gguf: string, work: string, quick: boolean): Promise<LlamaBench> {
  const settings = { threads: 1, contextSize: 1024, temperature: 0, maxTokens: 300 };
  const instructions = 'Tell long stories about Lily and her friends.';
  const message = 'Tell me a story about Lily, Tom and the big red ball in the park.';
  const runs = quick ? 4 : 12;

  // Direct: the same model file, template, settings and prompt, with no engine around it.
  const lib = await import('node-llama-cpp');
  const llama = await lib.getLlama({ gpu: llamaGpu(), build: 'never', logLevel: lib.LlamaLogLevel.error, maxThreads: settings.threads });
  const model = await llama.loadModel({ modelPath: gguf });
  const context = await model.createContext({ contextSize: settings.contextSize, threads: settings.threads });
  const chat = new lib.LlamaChat({ contextSequence: context.getSequence(), chatWrapper: new lib.TemplateChatWrapper(PLAIN_TEMPLATE) });
  const direct = async () => {
    let tokens = 0;
    const t0 = performance.now();
    await chat.generateResponse(
      [{ type: 'system', text: instructions }, { type: 'user', text: message }, { type: 'model', response: [] }],
      { maxTokens: settings.maxTokens, temperature: settings.temperature, onTextChunk: () => {}, onToken: (t: readonly unknown[]) => (tokens += t.length) },
    );
    return { tokens, ms: performance.now() - t0 };
  };

  // Through the engine: a whole entity turn (lease, prompt, stream, commit), a new entity each time
  // so every prompt is the same.
  const engine = openEngineSync({ db: join(work, 'llama.db'), route: () => ({ provider: 'llama', gguf, ...settings }) });
  const viaEngine = async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions }, 'local');
    const t0 = performance.now();
    let tokens = 0;
    for await (const ev of engine.entities.send(e.id, { content: message }, 'local')) if (ev.type === 'done') tokens = ev.completion.usage.completion_tokens;
    return { tokens, ms: performance.now() - t0 };
  };

  await direct();
  await viaEngine(); // warm-up: loads the model in the provider, the tokenizer, the JIT
  // Pairs, in alternating order, compared within each pair: this machine's speed drifts by tens of
  // percent from one second to the next, which a ratio of two separate medians would show as overhead.
  const ratios: number[] = [];
  const e: number[] = [];
  const d: number[] = [];
  let tokens = 0;
  for (let i = 0; i < runs; i++) {
    let a: { tokens: number; ms: number };
    let b: { tokens: number; ms: number };
    if (i % 2 === 0) {
      a = await direct();
      b = await viaEngine();
    } else {
      b = await viaEngine();
      a = await direct();
    }
    const directTps = (a.tokens / a.ms) * 1000;
    const engineTps = (b.tokens / b.ms) * 1000;
    d.push(directTps);
    e.push(engineTps);
    ratios.push(engineTps / directTps);
    tokens = b.tokens;
  }
  await engine.close();
  await context.dispose();
  await model.dispose();
  await llama.dispose();
  return { engineTps: median(e), directTps: median(d), ratio: median(ratios), tokens };
}
