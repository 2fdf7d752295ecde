import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect, done } from '../helpers/engine.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { tempDir } from '../helpers/temp.js';

const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-shared-');
let server: LlamaServer | undefined;
afterAll(() => server?.stop());

const ENTITIES = 8;
const TURNS = 3;
const PARALLEL = 4;

/**
 * llama-server's default layout: 4 slots sharing one 2,048-token context, and no reply limit (-n),
 * so a story runs until the context stops it. Nothing about the server is configured in mgpt.
 */
describe.skipIf(!parts)('turns in parallel on a context shared by the server’s slots (llama-server -c 2048, default slots)', () => {
  it(`${ENTITIES} entities, ${TURNS} turns each, ${PARALLEL} at a time: every turn is answered and stored, streamed and then buffered`, async () => {
    server = await startLlamaServer(parts!, ['-c', '2048']);
    const engine = openEngineSync({ db: `${dir}/shared.db`, route: () => ({ provider: 'openai', baseUrl: `${server!.origin}/v1`, model: 'stories' }) });
    const ids: string[] = [];
    for (let i = 0; i < ENTITIES; i++) ids.push((await engine.entities.create({ model: 'mgpt-1-27b' }, 'local')).id);
    // Streamed replies: the burst that teaches the route runs out of the shared context mid-reply,
    // and each cut reply goes on where it stopped; from then on the requests take turns.
    expect((await inParallel(engine, ids, TURNS, false)).failures).toEqual([]);
    const model = await engine.deps.chatModel('mgpt-1-27b');
    expect(await engine.store.calibration.get(model.routeKey)).toMatchObject({ contextSource: 'shared', contextTokens: 2048 });
    // The server's /props says 4 slots share the 2,048 tokens: each turn is planned for 512 of them.
    expect(await engine.deps.calibration.fit(model, 0, 0)).toMatchObject({ contextTokens: 512, share: { contextTokens: 2048, slots: 4 }, replyCap: 128 });
    // Whole replies (batch, stream: false) take turns too, each prompt and reply within its share.
    const whole = await inParallel(engine, ids, 1, true);
    expect(whole.failures).toEqual([]);
    expect(whole.used.length).toBe(ENTITIES);
    for (const tokens of whole.used) expect(tokens).toBeLessThanOrEqual(512);
    for (const id of ids) expect((await engine.entities.get(id, 'local')).transcript.messages).toBe(2 * (TURNS + 1));
    engine.close();
    // The turns take turns on one context: about a minute on a quiet machine, several under load.
  }, 300_000);
});

/**
 * `turns` turns on each entity as batch runs them: an entity's in order, `PARALLEL` entities side by
 * side. Returns the failures, and each answered turn's prompt and reply tokens as the server counted them.
 */
async function inParallel(engine: Engine, ids: string[], turns: number, buffered: boolean): Promise<{ failures: string[]; used: number[] }> {
  const failures: string[] = [];
  const used: number[] = [];
  const queue = ids.slice();
  const worker = async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      for (let t = 0; t < turns; t++) {
        const content = `Once upon a time a little dog found ball number ${t} in the park.`;
        await collect(engine.entities.send(id, { content, buffered }, 'local')).then(
          (events) => used.push(done(events).completion.usage.total_tokens),
          (err: Error) => failures.push(`${id}/${t}: ${err.message}`),
        );
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return { failures, used };
}
