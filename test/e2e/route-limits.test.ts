import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-route-limits-');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

describe('route limits on an OpenAI-compatible route, from the command line', () => {
  it('models add keeps --context, --max-tokens and --temperature, lists them, and the requests carry them', async () => {
    const env = cliEnv(dir);
    const added = await mgpt(['models', 'add', 'srv', '--provider', 'openai', '--base-url', fake.url, '--model', 'm', '--context', '4096', '--max-tokens', '64', '--temperature', '0.3', '--route', 'mgpt-1-27b'], env);
    expect(added.code, added.stderr).toBe(0);
    const listed = JSON.parse((await mgpt(['models', '--json'], env)).stdout).data.find((m: any) => m.id === 'mgpt-1-27b');
    expect(listed).toMatchObject({ provider: 'openai', uses: 'srv', contextSize: 4096, maxTokens: 64, temperature: 0.3 });
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    expect((await mgpt(['send', 'ada', 'hello'], env)).code).toBe(0);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'm', max_tokens: 64, temperature: 0.3 });
    const bad = await mgpt(['models', 'add', 'x', '--provider', 'openai', '--base-url', fake.url, '--context', 'lots'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^error: --context: /m)]);
    const threads = await mgpt(['models', 'add', 'x', '--provider', 'openai', '--base-url', fake.url, '--threads', '2'], env);
    expect([threads.code, threads.stderr]).toEqual([2, expect.stringMatching(/--gguf and --threads are for --provider llama/)]);
  });

  it('models add keeps --shared-slots for an openai route, refuses a bad count or a llama route, and turns are planned for the share', async () => {
    const env = cliEnv(`${dir}/slots`);
    const added = await mgpt(['models', 'add', 'pool', '--provider', 'openai', '--base-url', fake.url, '--model', 'm', '--context', '2048', '--shared-slots', '4', '--route', 'mgpt-1-27b'], env);
    expect(added.code, added.stderr).toBe(0);
    const listed = JSON.parse((await mgpt(['models', '--json'], env)).stdout).data.find((m: any) => m.id === 'mgpt-1-27b');
    expect(listed).toMatchObject({ uses: 'pool', contextSize: 2048, sharedSlots: 4, maxTokens: null });
    expect((await mgpt(['models'], env)).stdout).toMatch(/^mgpt-1-27b\t.*\t2048, 4 slots\t/m);
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    expect((await mgpt(['send', 'ada', 'hello'], env)).code).toBe(0);
    // A quarter of the 512-token share is the longest reply asked for.
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'm', max_tokens: 128 });
    const zero = await mgpt(['models', 'add', 'x', '--provider', 'openai', '--base-url', fake.url, '--shared-slots', '0'], env);
    expect([zero.code, zero.stderr]).toEqual([2, expect.stringMatching(/^error: --shared-slots: sharedSlots must be a whole number of slots from 1 to 1024, got 0/m)]);
    const llama = await mgpt(['models', 'add', 'x', '--provider', 'llama', '--gguf', '/nonexistent.gguf', '--shared-slots', '2'], env);
    expect([llama.code, llama.stderr]).toEqual([2, expect.stringMatching(/--shared-slots are for --provider openai/)]);
    const set = await mgpt(['config', 'set', 'models.pool.sharedSlots', '2.5'], env);
    expect([set.code, set.stderr]).toEqual([2, expect.stringMatching(/models\.pool\.sharedSlots must be a whole number of slots/)]);
  });
});
