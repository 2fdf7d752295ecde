import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, ProviderError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { cliEnv, firstOutput, mgpt, spawnMgpt } from '../helpers/cli.js';
import { collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI, isSummaryRequest } from '../helpers/fake-openai.js';
import { integrity, snapshot } from '../helpers/snapshot.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

/** An entity with a few turns and a summary block already, on a metered account. */
async function seeded(engine: Engine) {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Stay calm.' }, 'local');
  await engine.accounts.topup('local', 100);
  for (let i = 0; i < 8; i++) await collect(engine.entities.send(e.id, { content: `turn ${i}: ${'words and more words '.repeat(4)}` }, 'local'));
  return e;
}

describe('a failed or cancelled turn leaves no trace', () => {
  it('provider failure mid-stream', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await seeded(engine);
    const path = sqliteOf(engine).db.name;
    const before = snapshot(path, e.id);
    fake.script({ text: 'partial reply that will be cut off', failAfterChunks: 3 });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const ev of engine.entities.send(e.id, { content: 'will fail', idempotencyKey: 'k1' }, 'local')) {
        if (ev.type === 'delta') seen.push(ev.text);
      }
    })().catch((x) => x);
    expect(err).toBeInstanceOf(ProviderError);
    expect(seen.length).toBe(3);
    expect(snapshot(path, e.id)).toEqual(before);
    expect(integrity(path)).toBe('ok');

    // The retry with the same key completes exactly once.
    const ok = await collect(engine.entities.send(e.id, { content: 'will fail', idempotencyKey: 'k1' }, 'local'));
    expect(ok.at(-1)).toMatchObject({ type: 'done', replayed: false });
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(18);
    engine.close();
  });

  it('provider failure after a rotation summary was written', async () => {
    const engine = makeEngine(dir, { fake, windowBudget: 150 });
    const e = await seeded(engine);
    const path = sqliteOf(engine).db.name;
    const before = snapshot(path, e.id);
    const calls = fake.requests.length;
    fake.script({ text: 'a fine summary' }, { status: 500 });
    const big = 'this message is long enough to push the window over its budget '.repeat(8);
    const events: string[] = [];
    const err = await (async () => {
      for await (const ev of engine.entities.send(e.id, { content: big }, 'local')) events.push(ev.type);
    })().catch((x) => x);
    expect(err).toBeInstanceOf(ProviderError);
    // The rotation is announced with the reply (a refused prompt may be planned again), so a turn
    // that fails before answering announces none: nothing rotated.
    expect(events).toEqual([]);
    expect(fake.requests.length - calls).toBe(2);
    expect(isSummaryRequest(fake.requests.at(-2)!.body)).toBe(true);
    expect(snapshot(path, e.id)).toEqual(before);
    expect(integrity(path)).toBe('ok');
    engine.close();
  });

  it('a client that stops reading, or aborts, mid-stream', async () => {
    const engine = makeEngine(dir, { fake });
    const e = await seeded(engine);
    const path = sqliteOf(engine).db.name;
    const before = snapshot(path, e.id);
    const abortedBefore = fake.aborted;

    fake.script({ text: 'one two three four five six', chunkDelayMs: 30 });
    for await (const ev of engine.entities.send(e.id, { content: 'hello' }, 'local')) {
      if (ev.type === 'delta') break;
    }
    expect(snapshot(path, e.id)).toEqual(before);

    const ac = new AbortController();
    fake.script({ text: 'one two three four five six', chunkDelayMs: 30 });
    const err = await (async () => {
      for await (const ev of engine.entities.send(e.id, { content: 'hello', signal: ac.signal }, 'local')) {
        if (ev.type === 'delta') ac.abort();
      }
    })().catch((x) => x);
    expect(err).toBeInstanceOf(CancelledError);
    expect(snapshot(path, e.id)).toEqual(before);
    // The provider call itself was cancelled, both times.
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.aborted - abortedBefore).toBe(2);
    // And the lease was released: the next turn goes through at once.
    await expect(collect(engine.entities.send(e.id, { content: 'after' }, 'local'))).resolves.toBeTruthy();
    expect(integrity(path)).toBe('ok');
    engine.close();
  });

  it('a process killed with SIGKILL during a turn', async () => {
    const env = cliEnv(dir, { MGPT_DB: join(dir, 'killed.db'), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const created = await mgpt(['entities', 'create', '--name', 'k'], env);
    const id = created.stdout.trim();
    await mgpt(['send', id, 'first message'], env);
    await mgpt(['accounts', 'topup', 'local', '5'], env);
    const before = snapshot(env.MGPT_DB, id);
    fake.script({ text: 'a slow reply that never finishes because the process dies', chunkDelayMs: 100 });
    const child = spawnMgpt(['send', id, 'doomed'], env);
    await firstOutput(child);
    child.kill('SIGKILL');
    const r = await child.result;
    expect(r.signal).toBe('SIGKILL');
    expect(snapshot(env.MGPT_DB, id)).toEqual(before);
    expect(integrity(env.MGPT_DB)).toBe('ok');
  });

  it('Ctrl-C (SIGINT) during mgpt send cancels the turn and says nothing was stored', async () => {
    const env = cliEnv(dir, { MGPT_DB: join(dir, 'sigint.db'), MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    await mgpt(['send', id, 'first'], env);
    const before = snapshot(env.MGPT_DB, id);
    const abortedBefore = fake.aborted;
    fake.script({ text: 'a long reply the person does not want to wait for', chunkDelayMs: 100 });
    const child = spawnMgpt(['send', id, 'never mind'], env);
    await firstOutput(child);
    child.kill('SIGINT');
    const r = await child.result;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/^error: cancelled: nothing of this turn was stored$/m);
    // The partial reply's line is ended, so the terminal's ^C and the error do not run into it.
    expect(r.stdout).toMatch(/^a[^\n]*\n$/);
    expect(snapshot(env.MGPT_DB, id)).toEqual(before);
    await new Promise((res) => setTimeout(res, 50));
    expect(fake.aborted - abortedBefore).toBe(1);
    // The lease went with it: the next message goes through at once.
    expect((await mgpt(['send', id, 'again'], env)).code).toBe(0);
  });
});
