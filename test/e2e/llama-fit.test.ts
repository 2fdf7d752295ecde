import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { cliEnv, mgptBinary } from '../helpers/cli.js';
import { collect, done } from '../helpers/engine.js';
import { STORY_PROMPTS, testGguf } from '../helpers/gguf.js';
import { tempDir } from '../helpers/temp.js';

const gguf = testGguf();
const dir = tempDir('mgpt-llama-fit-');

// The model file is never committed: without MGPT_TEST_GGUF these cannot run, and testGguf()
// prints a banner saying so. .ci/run sets it.
describe.skipIf(!gguf)('a 512-token llama model with the default budget (real model)', () => {
  let engine: Engine;
  beforeAll(() => {
    engine = openEngineSync({ db: `${dir}/fit.db`, route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 512, temperature: 0 }) });
  });
  afterAll(() => engine.close());

  it('holds 30 turns without a failure, every prompt and reply within the context', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Tell short stories about Lily.' }, 'local');
    expect(e.window.budget_tokens).toBe(32_000);
    // Overflow answers the engine had to learn from (the model counts far more tokens than o200k).
    const learn = engine.deps.calibration.learn.bind(engine.deps.calibration);
    let refused = 0;
    engine.deps.calibration.learn = (...args) => {
      refused++;
      return learn(...args);
    };
    let rotations = 0;
    for (let i = 0; i < 30; i++) {
      const events = await collect(engine.entities.send(e.id, { content: `${STORY_PROMPTS[i % STORY_PROMPTS.length]} (${i})` }, 'local'));
      rotations += events.filter((x) => x.type === 'rotation').length;
      const c = done(events).completion;
      // The provider counts with the model's own tokenizer; prompt and reply share the context.
      expect(c.usage.prompt_tokens + c.usage.completion_tokens).toBeLessThanOrEqual(512);
    }
    expect(rotations).toBeGreaterThanOrEqual(3);
    expect(refused).toBeLessThanOrEqual(2);
    const calibration = (await engine.store.calibration.get(`llama:${gguf}`))!;
    console.log(`llama 512: ${refused} refused prompts, factor ${calibration.factor.toFixed(2)} after ${calibration.samples} samples, ${rotations} rotations`);
    expect(calibration.factor).toBeGreaterThan(1);
    const w = await engine.entities.window(e.id, 'local');
    expect(checkWindowInvariant(w.blocks.map((b) => ({ kind: b.kind, covers: b.covers })), 60)).toBeNull();
    // 30 turns of a real model on one thread, with their summaries: ~25 s quiet, past a minute when
    // every core is busy.
  }, 180_000);

  it("runs the llama example of docs/configuration.md as written, several turns in fresh processes", async () => {
    const env = cliEnv(`${dir}/readme`);
    const added = await mgptBinary(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', gguf!, '--threads', '1', '--context', '512', '--route', 'mgpt-1-27b'], env);
    expect(added.code, added.stderr).toBe(0);
    expect((await mgptBinary(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    for (let i = 0; i < 6; i++) {
      const r = await mgptBinary(['send', 'ada', `${STORY_PROMPTS[i % STORY_PROMPTS.length]} Once upon a time`], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().length).toBeGreaterThan(0);
    }
  });
});
