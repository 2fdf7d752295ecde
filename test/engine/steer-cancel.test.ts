import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/** A cancelled steer (fold now, --undo, --resummarize) writes nothing: the summary call stops and the write is skipped (issue 33). */
const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

/** An entity with a few turns and one manual rotation behind it; summaries answer at once. */
async function steered(engine: Engine): Promise<string> {
  fake.fallback = (body) => ({ text: isSummaryRequest(body) ? 'a short summary' : 'ok, noted' });
  const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Be brief.', recall: 'off' }, 'local');
  for (let i = 0; i < 6; i++) await collect(engine.entities.send(e.id, { content: `message ${i} about rivers and songs` }, 'local'));
  await engine.entities.rotate(e.id, { action: 'rotate' }, 'local');
  for (let i = 0; i < 4; i++) await collect(engine.entities.send(e.id, { content: `later ${i} about foxes` }, 'local'));
  return e.id;
}

async function state(engine: Engine, id: string) {
  return { rotations: await engine.entities.rotations(id, 'local'), window: await engine.entities.window(id, 'local') };
}

describe('a cancelled rotate writes nothing', () => {
  for (const action of ['rotate', 'resummarize'] as const) {
    it(`${action}: aborted while the summary is being written`, async () => {
      const engine = makeEngine(dir, { fake, windowBudget: 2000 });
      const id = await steered(engine);
      const before = await state(engine, id);
      let asked!: () => void;
      const summaryAsked = new Promise<void>((r) => (asked = r));
      fake.fallback = (body) => {
        if (!isSummaryRequest(body)) return { text: 'ok' };
        asked();
        return { text: 'a summary that arrives too late', delayMs: 800 };
      };
      const abort = new AbortController();
      const steer = engine.entities.rotate(id, { action }, 'local', abort.signal);
      await summaryAsked;
      abort.abort();
      await expect(steer).rejects.toBeInstanceOf(CancelledError);
      await expect(steer).rejects.toThrow(/cancelled: nothing of this rotation was stored/);
      // Past the summary's delay: a late answer still writes nothing.
      await new Promise((r) => setTimeout(r, 1000));
      expect(await state(engine, id)).toEqual(before);
      // The lease was released: the next steer works.
      fake.fallback = (body) => ({ text: isSummaryRequest(body) ? 'a short summary' : 'ok' });
      await engine.entities.rotate(id, { action }, 'local');
      expect((await engine.entities.rotations(id, 'local')).rotations.length).toBe(before.rotations.rotations.length + 1);
    });
  }

  it('undo: a signal aborted before the write stores nothing', async () => {
    const engine = makeEngine(dir, { fake, windowBudget: 2000 });
    const id = await steered(engine);
    const before = await state(engine, id);
    const abort = new AbortController();
    abort.abort();
    await expect(engine.entities.rotate(id, { action: 'undo' }, 'local', abort.signal)).rejects.toBeInstanceOf(CancelledError);
    expect(await state(engine, id)).toEqual(before);
  });
});
