// What rotation costs against a real model server: llama-server's own timings for every request
// of a long conversation on one entity (the default budget, no context configured).
import { join } from 'node:path';
import { openEngineSync } from '../src/engine/open-engine.js';
import { llamaServerParts, startLlamaServer } from '../test/helpers/llama-server.js';
import { type Timed, recordingProxy } from '../test/helpers/recording-proxy.js';


export interface RotationCost {
  context: number;
  turns: number;
  /** Prompt tokens the server processed per turn, summaries included. */
  processedPerTurn: number;
  /** The new prompt tokens of a turn: the median `prompt_n` of reply requests that hit the cache. */
  newPerTurn: number;
  /**
   * The conversation's own growth a turn: the whole conversation (instructions and every message,
   * in the server's chat template, counted by its tokenizer) over the turns: what a client that
   * resends the whole history adds each turn.
   */
  growthPerTurn: number;
  summariesPer100: number;
  /** Of all prompt tokens, the share the cache served. */
  cacheReuse: number;
  /** Of the prompt tokens processed, the share summaries took. */
  summaryShare: number;
  failures: number;
  /** Requests the server refused (a context learned from a refusal is one). */
  refused: number;
  /** Tokens automatic recall put in a turn's prompt, on average (0 with recall off). */
  recalledPerTurn: number;
  /** Every request, in order: for a closer look (MGPT_BENCH_TRACE=1 prints them). */
  trace: Timed[];
}

const WORDS = (
  'Lily Tom the big red ball park sun dog cat tree house mom dad played ran jumped happy sad ' +
  'friend little girl boy said looked found wanted to and with in on a they were went saw'
).split(' ');

/** A deterministic message of 12-30 words, so runs compare. */
export function messages(seed: number): () => string {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  return () => Array.from({ length: 12 + Math.floor(next() * 19) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** null when llama-server or the model is not here (the helper says so loudly). */
export async function benchRotationCost(
  work: string,
  context: number,
  turns: number,
  shares: { rotateTargetPercent?: number; summaryPercent?: number } = {},
  recall: 'off' | 'auto' = 'off',
): Promise<RotationCost | null> {
  const parts = llamaServerParts();
  if (!parts) return null;
  // The tiny model was trained at 2,048 tokens, and llama-server caps a slot there unless told otherwise.
  const trained = context > 2048 ? ['--override-kv', `llama.context_length=int:${context}`] : [];
  const server = await startLlamaServer(parts, ['-c', String(context), '-np', '1', '--temp', '0', '-n', '64', ...trained]);
  const seen: Timed[] = [];
  const proxy = await recordingProxy(server.origin, seen);
  const engine = openEngineSync({
    db: join(work, `rotation-${context}-${recall}-${Date.now()}.db`),
    ...shares,
    route: () => ({ provider: 'openai', baseUrl: `${proxy.origin}/v1`, model: 'stories', maxRetries: 0 }),
  });
  let failures = 0;
  let recalled = 0;
  let growth = 0;
  try {
    const instructions = 'Tell gentle stories about Lily and Tom.';
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions, recall }, 'local');
    const next = messages(context);
    for (let i = 0; i < turns; i++) {
      try {
        for await (const part of engine.entities.send(e.id, { content: next() }, 'local')) {
          if (part.type === 'done') recalled += part.completion.recalled?.reduce((t, m) => t + m.tokens, 0) ?? 0;
        }
      } catch {
        failures++;
      }
    }
    growth = (await conversationTokens(server.origin, instructions, await transcript(engine, e.id))) / turns;
  } finally {
    engine.close();
    proxy.close();
    await server.stop();
  }
  return { ...costOf(context, turns, seen, failures), recalledPerTurn: recalled / turns, growthPerTurn: growth };
}

async function transcript(engine: ReturnType<typeof openEngineSync>, id: string): Promise<Array<{ role: string; content: string }>> {
  const out: Array<{ role: string; content: string }> = [];
  for (let after = 0; ; ) {
    const page = await engine.entities.messages(id, { after, limit: 500 }, 'local');
    out.push(...page.data.map((m) => ({ role: m.role, content: m.content })));
    if (!page.has_more) return out;
    after = page.data.at(-1)!.seq;
  }
}

/** The whole conversation as the server's chat template lays it out, in the server's own tokens. */
async function conversationTokens(origin: string, instructions: string, messages: Array<{ role: string; content: string }>): Promise<number> {
  const post = async (path: string, body: unknown) => (await fetch(`${origin}${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;
  const { prompt } = await post('/apply-template', { messages: [{ role: 'system', content: instructions }, ...messages] });
  const { tokens } = await post('/tokenize', { content: prompt });
  return (tokens as unknown[]).length;
}

export function costOf(context: number, turns: number, seen: Timed[], failures: number): Omit<RotationCost, 'recalledPerTurn' | 'growthPerTurn'> {
  const processed = seen.reduce((t, r) => t + r.promptN, 0);
  const cached = seen.reduce((t, r) => t + r.cacheN, 0);
  const summaries = seen.filter((r) => r.summary);
  const hits = seen.filter((r) => !r.summary && r.cacheN > 0).map((r) => r.promptN);
  return {
    context,
    turns,
    processedPerTurn: processed / turns,
    newPerTurn: median(hits),
    summariesPer100: (summaries.length * 100) / turns,
    cacheReuse: cached / Math.max(1, processed + cached),
    summaryShare: summaries.reduce((t, r) => t + r.promptN, 0) / Math.max(1, processed),
    failures,
    refused: seen.filter((r) => r.status !== 200).length,
    trace: seen,
  };
}
