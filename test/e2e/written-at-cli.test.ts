import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// `mgpt send --at` and a batch line's `at`: the real binary, on the local backend and as a remote
// client of the real binary's server, stores the date it was given and refuses one that is not.
const dir = tempDir('mgpt-written-at-');
let fake: FakeOpenAI;
let server: ReturnType<typeof spawnMgpt> | undefined;
const envs: Array<[string, () => Record<string, string>]> = [];
let localEnv: Record<string, string>;
let remoteEnv: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  localEnv = cliEnv(`${dir}/local`, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
  const serverEnv = cliEnv(`${dir}/server`, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
  const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
  server = spawnMgpt(['serve', '--port', '0'], serverEnv);
  const url = await new Promise<string>((resolve) => server!.stdout!.once('data', (d) => resolve(String(d).trim())));
  remoteEnv = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key, MGPT_DB: `${dir}/client/never.db` });
});
afterAll(async () => {
  server?.kill('SIGTERM');
  await server?.result;
  await fake.close();
});
envs.push(['local', () => localEnv], ['remote', () => remoteEnv]);

const datesOf = async (env: Record<string, string>, name: string) =>
  (JSON.parse((await mgptBinary(['history', name, '--all', '--json'], env)).stdout).data as Array<{ seq: number; created_at: string }>).map((m) => [m.seq, m.created_at]);

describe.each(envs)('dated messages on the command line: %s', (backend, envOf) => {
  it('send --at and a batch line\'s at store the message and its reply with that date', async () => {
    const env = envOf();
    const name = `diary-${backend}`;
    expect((await mgptBinary(['entities', 'create', '--name', name, '--recall', 'off'], env)).code).toBe(0);
    const sent = await mgptBinary(['send', name, '--at', '2024-05-07T10:00:00+02:00', 'Jon mentored me for my first talk.'], env);
    expect([sent.code, sent.stderr]).toEqual([0, '']);
    const batch = await mgptBinary(['batch', '-'], env, `{"id":"d1","entity":"${name}","input":"Then we went hiking.","at":"2024-06-01"}\n`);
    expect(batch.code).toBe(0);
    expect(JSON.parse(batch.stdout)).toMatchObject({ id: 'd1', ok: true });
    expect(await datesOf(env, name)).toEqual([
      [1, '2024-05-07T08:00:00.000Z'], [2, '2024-05-07T08:00:00.000Z'], [3, '2024-06-01T00:00:00.000Z'], [4, '2024-06-01T00:00:00.000Z'],
    ]);
  });

  it('a bad date exits 2 with the reason and stores nothing', async () => {
    const env = envOf();
    const name = `strict-${backend}`;
    await mgptBinary(['entities', 'create', '--name', name, '--recall', 'off'], env);
    const asked = fake.requests.length;
    const word = await mgptBinary(['send', name, '--at', 'yesterday', 'hi'], env);
    expect(word.code).toBe(2);
    expect(word.stderr).toMatch(/at "yesterday" is not an ISO 8601 time/);
    if (backend === 'local') expect(word.stderr).toMatch(/2024-05-07T10:00:00Z/);
    const future = await mgptBinary(['send', name, '--at', '2999-01-01T00:00:00Z', 'hi'], env);
    expect([future.code, future.stderr]).toEqual([2, expect.stringMatching(/is in the future/)]);
    await mgptBinary(['send', name, '--at', '2024-06-01T12:00:00Z', 'first'], env);
    const back = await mgptBinary(['send', name, '--at', '2024-05-01T12:00:00Z', 'earlier'], env);
    expect([back.code, back.stderr]).toEqual([2, expect.stringMatching(/before the entity's latest message \(#2/)]);
    // Only the one good message reached the model and the transcript.
    expect(fake.requests.length - asked).toBe(1);
    expect((await datesOf(env, name)).length).toBe(2);
    // A batch whose line has a bad date runs nothing.
    const bad = await mgptBinary(['batch', '-'], env, `{"id":"ok","entity":"${name}","input":"x"}\n{"id":"b1","entity":"${name}","input":"y","at":"soon"}\n`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/line 2 \(b1\): at "soon" is not an ISO 8601 time/);
    expect((await datesOf(env, name)).length).toBe(2);
  });
});
