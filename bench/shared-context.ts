// Turns on a context llama-server shares between its parallel requests (-c 2048, its default
// slots, no -n): what the shared-context gate lets through. 8 entities, 10 buffered turns each, 8
// at a time, nothing configured in mgpt (the first burst teaches the route that it is shared, and
// its /props the slots each turn's share is cut for). The same turns on other layouts (-np 4: a
// context of its own per slot) and with a route setting (sharedSlots: 1, every turn planned for the
// whole context, as before shares) are what it is compared with. While they run, llama-server's
// /slots is polled for how many slots are busy.
import { join } from 'node:path';
import type { TurnEvent } from '../src/core/wire/entity-types.js';
import type { Engine } from '../src/engine/engine.js';
import { openEngineSync } from '../src/engine/open-engine.js';
import { llamaServerParts, startLlamaServer } from '../test/helpers/llama-server.js';

export interface SharedContextBench {
  turns: number;
  failed: number;
  wallMs: number;
  /** Busy slots: the most at once, and the mean over the polls that found any busy. */
  busyMax: number;
  busyMean: number;
  /** A turn from being sent to its reply, whole (the gate's wait, the prompt and the reply). */
  turnP50Ms: number;
  turnMaxMs: number;
  /** The longest reply the route asks for at the end (what a reply reserves until replies were seen shorter). */
  replyCap: number;
  replyP50: number;
  replyP90: number;
  replyMax: number;
  promptP50: number;
  /** Turns stored out of the order their entity sent them. */
  outOfOrder: number;
  /** The context a turn was planned for at the end, and the slots it was cut for (1: all of it). */
  turnContext?: number;
  slots: number;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

const ball = (t: number) => `Once upon a time a little dog found ball number ${t} in the park.`;

/**
 * null when llama-server or the model is not here. `serverArgs` replaces the shared default
 * (-c 2048); `route` adds to the route mgpt is given (sharedSlots).
 */
export async function benchSharedContext(work: string, serverArgs = ['-c', '2048'], route: Record<string, unknown> = {}, entities = 8, turns = 10): Promise<SharedContextBench | null> {
  const parts = llamaServerParts();
  if (!parts) return null;
  const server = await startLlamaServer(parts, serverArgs);
  const engine = openEngineSync({ db: join(work, `shared-${Date.now()}.db`), route: () => ({ provider: 'openai', baseUrl: server.url, model: 'stories', ...route }) });
  const busy: number[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      try {
        const slots = (await (await fetch(`${server.origin}/slots`)).json()) as { is_processing: boolean }[];
        const n = slots.filter((s) => s.is_processing).length;
        if (n) busy.push(n);
      } catch {
        // a poll lost to load
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const ids: string[] = [];
    for (let i = 0; i < entities; i++) ids.push((await engine.entities.create({ model: 'mgpt-1-27b' }, 'local')).id);
    const turnMs: number[] = [];
    const replies: number[] = [];
    const prompts: number[] = [];
    let failed = 0;
    const t0 = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let t = 0; t < turns; t++) {
          const content = ball(t);
          const s = performance.now();
          try {
            const events: TurnEvent[] = [];
            for await (const e of engine.entities.send(id, { content, buffered: true }, 'local')) events.push(e);
            const done = events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;
            replies.push(done.completion.usage.completion_tokens);
            prompts.push(done.completion.usage.prompt_tokens);
            turnMs.push(performance.now() - s);
          } catch {
            failed++;
          }
        }
      }),
    );
    const wallMs = performance.now() - t0;
    const model = await engine.deps.chatModel('mgpt-1-27b');
    const fit = await engine.deps.calibration.fit(model, 0, 0);
    return {
      turns: entities * turns, failed, wallMs,
      busyMax: Math.max(0, ...busy), busyMean: busy.reduce((a, b) => a + b, 0) / Math.max(1, busy.length),
      turnP50Ms: pct(turnMs, 0.5), turnMaxMs: Math.max(...turnMs),
      replyCap: fit.replyCap ?? fit.reserveTokens, replyP50: pct(replies, 0.5), replyP90: pct(replies, 0.9), replyMax: Math.max(...replies),
      promptP50: pct(prompts, 0.5),
      outOfOrder: await outOfOrder(engine, ids, turns),
      ...(fit.contextTokens === undefined ? {} : { turnContext: fit.contextTokens }), slots: fit.share?.slots ?? 1,
    };
  } finally {
    polling = false;
    await poll;
    engine.close();
    await server.stop();
  }
}

/** Entities whose stored user messages are not the turns in the order they were sent. */
async function outOfOrder(engine: Engine, ids: string[], turns: number): Promise<number> {
  let wrong = 0;
  for (const id of ids) {
    const page = await engine.entities.messages(id, { limit: 2 * turns }, 'local');
    const sent = page.data.filter((m) => m.role === 'user').map((m) => m.content);
    if (sent.join('\n') !== Array.from({ length: turns }, (_, t) => ball(t)).join('\n')) wrong++;
  }
  return wrong;
}
