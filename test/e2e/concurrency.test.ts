import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { snapshot } from '../helpers/snapshot.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

describe('one writer per entity, across processes', () => {
  it('two processes send at once: one succeeds, the other exits 5', async () => {
    const env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    fake.fallback = (body) => ({ text: `slow reply to ${body.messages.at(-1).content}`, chunkDelayMs: 150 });
    try {
      const a = spawnMgpt(['send', id, 'from A'], env);
      await new Promise<void>((r) => a.stdout!.once('data', () => r()));
      const b = await mgpt(['send', id, 'from B'], env);
      const ra = await a.result;
      expect(ra.code).toBe(0);
      expect(ra.stdout).toBe('slow reply to from A\n');
      expect(b.code).toBe(5);
      expect(b.stderr).toMatch(/^error: entity \S+ is answering another message/m);
      expect(b.stdout).toBe('');
    } finally {
      fake.fallback = (await import('../helpers/fake-openai.js')).echoLastUser;
    }
    expect(snapshot(env.MGPT_DB, id).transcript.map((m: any) => m.content)).toEqual(['from A', 'slow reply to from A']);
  });

  it('a lease left by a killed process expires within 30 s (the default TTL)', async () => {
    const env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_DB: `${dir}/lease.db` });
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    fake.script({ text: 'never finished because the sender dies', chunkDelayMs: 200 });
    const a = spawnMgpt(['send', id, 'doomed'], env);
    await new Promise<void>((r) => a.stdout!.once('data', () => r()));
    a.kill('SIGKILL');
    await a.result;
    const killedAt = Date.now();
    const blocked = await mgpt(['send', id, 'too early'], env);
    expect(blocked.code).toBe(5);
    // Poll like a patient script would, until the dead writer's lease has expired.
    let ok;
    do {
      await new Promise((r) => setTimeout(r, 1000));
      ok = await mgpt(['send', id, 'after expiry'], env);
    } while (ok.code === 5 && Date.now() - killedAt < 35_000);
    expect(ok).toMatchObject({ code: 0, stdout: 'reply: after expiry\n' });
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(snapshot(env.MGPT_DB, id).transcript.map((m: any) => m.content)).toEqual(['after expiry', 'reply: after expiry']);
  });
});
