import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const providerEnv = (sub: string) =>
  cliEnv(join(dir, sub), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
const history = async (env: Record<string, string>, id: string) =>
  (JSON.parse((await mgpt(['history', id, '--json'], env)).stdout).data as Array<{ content: string }>).map((m) => m.content);
/** Resolves once the provider has been asked for one more reply than `before`. */
const providerAsked = async (before: number) => {
  while (fake.requests.length <= before) await new Promise((r) => setTimeout(r, 10));
};

describe('signals free what a command holds', () => {
  for (const [signal, code] of [['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    it(`${signal} during mgpt send: exit ${code}, no raw output, nothing stored, and the next send goes through at once`, async () => {
      const env = providerEnv(signal);
      const id = (await mgpt(['entities', 'create', '--name', signal], env)).stdout.trim();
      const before = fake.requests.length;
      fake.script({ text: 'never seen', delayMs: 20_000 });
      const send = spawnMgpt(['send', id, 'interrupted'], env);
      await providerAsked(before);
      send.kill(signal);
      const r = await send.result;
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(/^error: cancelled: nothing of this turn was stored\n/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      // Without the release the lease would hold the entity for its TTL (15 s): exit 5.
      const next = await mgpt(['send', id, 'right after'], env);
      expect([next.code, next.stderr]).toEqual([0, '']);
      expect(await history(env, id)).toEqual(['right after', 'reply: right after']);
    });
  }

  it('SIGTERM during mgpt respond frees the universe: the next respond goes through at once', async () => {
    const env = { ...providerEnv('respond'), MGPT_PROMPTS_DIR: join(dir, 'prompts') };
    expect((await mgpt(['prompts', 'add', 'narrator', 'You narrate.'], env)).code).toBe(0);
    const u = (await mgpt(['universes', 'create', '--prompt', 'narrator'], env)).stdout.trim();
    const before = fake.requests.length;
    fake.script({ text: 'never seen', delayMs: 20_000 });
    const respond = spawnMgpt(['respond', u, 'interrupted'], env);
    await providerAsked(before);
    respond.kill('SIGTERM');
    const r = await respond.result;
    expect(r.code).toBe(143);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const next = await mgpt(['respond', u, 'right after'], env);
    // The interrupted turn's message stays (a universe stores it at once, as its seed says), so the
    // next request holds two user messages in a row, joined into one as every chat template needs.
    expect([next.code, next.stdout]).toEqual([0, 'reply: interrupted\n\nright after\n']);
  });

  it('mgpt serve on SIGTERM stops accepting, lets a streamed turn in flight finish, then exits 0', async () => {
    const env = providerEnv('serve');
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const id = (await mgpt(['entities', 'create', '--name', 'drained'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], env);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    fake.script({ text: ['one ', 'two ', 'three ', 'four ', 'five'], chunkDelayMs: 150 });
    const res = await fetch(`${url}/v1/entities/${id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'count', stream: true }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    server.kill('SIGTERM');
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      text += new TextDecoder().decode(r.value);
    }
    const deltas = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]).choices?.[0]?.delta?.content ?? '').join('');
    expect(deltas).toBe('one two three four five');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const r = await server.result;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/stopped/);
    expect(await history(env, id)).toEqual(['count', 'one two three four five']);
  });
});
