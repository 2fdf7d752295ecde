import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RotateAction } from '../../src/core/wire/rotation-types.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngine } from '../../src/engine/open-engine.js';
import { cliEnv, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// SIGKILL while `mgpt rotate` folds, undoes or writes a summary again (issue 33): the real binary
// (npm run build first) on SQLite and on PostgreSQL, killed while the model writes the summary and
// at a sweep of moments around the commit. Each kill leaves the entity as it was before the action
// or as it is after it: never a window without its record, nor a record without its window.
const dir = tempDir();
const cluster = await startPostgres('SIGKILL during mgpt rotate on PostgreSQL');
afterAll(() => cluster?.stop());
const stores = [{ name: 'sqlite', db: async () => join(dir, 'kill.db') }];
if (cluster) stores.push({ name: 'postgres', db: async () => cluster.createDatabase('rotate_kill') });

/** What a steering action may change: the window, its counters, and the history. */
async function state(engine: Engine, id: string) {
  const { entity_id: _, ...window } = await engine.entities.window(id, 'local');
  const { transcript } = await engine.entities.get(id, 'local');
  return { window, transcript, rotations: (await engine.entities.rotations(id, 'local')).rotations };
}
type State = Awaited<ReturnType<typeof state>>;

/** The state after `action` completed on `before`: one more record (or one marked undone) whose window is the window now. */
function isAfter(action: RotateAction, before: State, now: State): boolean {
  const w = now.window;
  if (w.tokens !== w.blocks.reduce((n, b) => n + b.tokens, 0) || JSON.stringify(now.transcript) !== JSON.stringify(before.transcript)) return false;
  if (action === 'undo') {
    const undone = now.rotations.filter((r, i) => r.undone && !before.rotations[i].undone);
    return now.rotations.length === before.rotations.length && undone.length === 1 && JSON.stringify(w.blocks) === JSON.stringify(undone[0].blocks_before);
  }
  const last = now.rotations.at(-1)!;
  const trigger = action === 'rotate' ? 'manual' : 'resummarize';
  return now.rotations.length === before.rotations.length + 1 && last.trigger === trigger && JSON.stringify(w.blocks) === JSON.stringify(last.blocks_after);
}

describe.each(stores)('SIGKILL during mgpt rotate: $name', ({ db }) => {
  let fake: FakeOpenAI;
  let engine: Engine;
  let env: Record<string, string>;
  let id: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const target = await db();
    engine = await openEngine({ db: target, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }) });
    env = cliEnv(join(dir, 'home'), { MGPT_DB: target, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    id = (await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Keep the ledger.' }, 'local')).id;
    await engine.entities.update(id, { budget_tokens: 400 }, 'local');
    for (let i = 0; i < 12; i++) for await (const _ of engine.entities.send(id, { content: `entry ${i}: ${'crates of tea and barrels of rum '.repeat(2)}` }, 'local'));
    expect((await engine.entities.rotations(id, 'local')).rotations.length).toBeGreaterThan(0);
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** Kills `mgpt rotate` at `when` (ms after spawn, or once the summary request arrived) and says what the entity became. */
  async function killed(action: RotateAction, when: number | 'summary'): Promise<'before' | 'after'> {
    const before = await state(engine, id);
    const flag = action === 'undo' ? ['--undo'] : action === 'resummarize' ? ['--resummarize'] : [];
    const asked = fake.requests.length;
    fake.script({ text: `summary written at ${when}`, delayMs: when === 'summary' ? 5_000 : 0 });
    const child = spawnMgpt(['rotate', id, ...flag], env);
    if (when === 'summary') {
      while (!fake.requests.slice(asked).some((r) => isSummaryRequest(r.body))) await new Promise((r) => setTimeout(r, 5));
    } else {
      await new Promise((r) => setTimeout(r, when));
    }
    child.kill('SIGKILL');
    await child.result;
    fake.script();
    const now = await state(engine, id);
    // A lease the killed process held expires on its own; here it goes at once, as its expiry would.
    await engine.store.leases.release(`entity:${id}`, (await leaseOwner()) ?? '');
    if (JSON.stringify(now) === JSON.stringify(before)) return 'before';
    expect(isAfter(action, before, now), `${action} killed at ${when}`).toBe(true);
    return 'after';
  }

  async function leaseOwner(): Promise<string | undefined> {
    const held = await engine.store.leases.acquire({ subject: `entity:${id}`, owner: 'probe', idempotencyKey: null, contentSha256: null, expiresAt: Date.now() + 1 }, Number.MAX_SAFE_INTEGER);
    return held?.owner ?? 'probe';
  }

  for (const action of ['rotate', 'resummarize', 'undo'] as const) {
    it(`${action}: killed mid-action leaves it as before, and at any moment before or after, never between`, async () => {
      if (action !== 'undo') expect(await killed(action, 'summary')).toBe('before');
      const seen = new Set<string>();
      for (const ms of [150, 250, 320, 380, 440, 500, 600, 800, 1200, 2500]) {
        seen.add(await killed(action, ms));
        if (seen.has('after')) break;
      }
      // Let it finish once if no kill came late enough: the action itself works from the state the kills left.
      if (!seen.has('after')) expect(await killed(action, 6000)).toBe('after');
    }, 120_000);
  }
});
