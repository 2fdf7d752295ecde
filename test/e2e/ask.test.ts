import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-ask-');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const provider = () => ({ MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
const lastUser = () => fake.requests.at(-1)!.body.messages.at(-1).content;

describe('mgpt ask: the one-shot of llm "prompt"', () => {
  it('streams the answer, puts piped stdin before TEXT, takes a system prompt, stores nothing but the log', async () => {
    const env = cliEnv(`${dir}/one`, provider());
    fake.script({ text: ['An ', 'answer.'] });
    const plain = await mgpt(['ask', 'What is a monad?'], env);
    expect([plain.code, plain.stdout]).toEqual([0, 'An answer.\n']);
    expect(fake.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'What is a monad?' }]);

    const piped = await mgpt(['ask', 'summarize', '-s', 'You are terse.', '-m', 'game-1-lite-frozen'], env, 'line one\nline two\n');
    expect(piped.code).toBe(0);
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'line one\nline two\n\nsummarize' },
    ]);
    expect((await mgpt(['ask'], env, 'only stdin\n')).code).toBe(0);
    expect(lastUser()).toBe('only stdin');

    const json = JSON.parse((await mgpt(['ask', 'as json', '--json'], env)).stdout);
    expect(json).toMatchObject({ assistantRaw: 'reply: as json', requestLog: { id: expect.any(String) } });
    const logs = JSON.parse((await mgpt(['logs', '--json'], env)).stdout);
    expect(logs.total).toBe(4);
    expect(logs.data[0]).toMatchObject({ id: json.requestLog.id, kind: 'text', universeId: null, status: 'ok' });
    expect(JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data).toEqual([]);
    expect(JSON.parse((await mgpt(['universes', 'list', '--json'], env)).stdout).data ?? []).toEqual([]);

    const none = await mgpt(['ask'], env, '');
    expect([none.code, none.stderr]).toEqual([2, expect.stringMatching(/^error: /)]);
  });

  it('-c sends to the most recently active entity, a turn it remembers', async () => {
    const env = cliEnv(`${dir}/continue`, provider());
    const missing = await mgpt(['ask', '-c', 'hello'], env);
    expect([missing.code, missing.stderr]).toEqual([4, expect.stringContaining('no entity to continue')]);
    for (const name of ['old', 'recent']) expect((await mgpt(['entities', 'create', '--name', name], env)).code).toBe(0);
    expect((await mgpt(['send', 'old', 'first'], env)).code).toBe(0);
    const r = await mgpt(['ask', '-c', 'and then?'], env);
    expect([r.code, r.stdout]).toEqual([0, 'reply: and then?\n']);
    // Named on stderr even when stderr is not a terminal: a script sees which entity it wrote to.
    expect(r.stderr).toContain('continuing old');
    const history = JSON.parse((await mgpt(['history', 'old', '--json'], env)).stdout).data.map((m: { content: string }) => m.content);
    expect(history).toEqual(['first', 'reply: first', 'and then?', 'reply: and then?']);
  });

  it('send takes piped stdin plus TEXT the same way', async () => {
    const env = cliEnv(`${dir}/send`, provider());
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const r = await mgpt(['send', 'ada', 'What first?'], env, 'notes: buy milk\n');
    expect(r.code).toBe(0);
    expect(lastUser()).toBe('notes: buy milk\n\nWhat first?');
  });

  it('ask and send take --temperature, --max-tokens and -o KEY VALUE; they reach the provider; ask --no-stream', async () => {
    const env = cliEnv(`${dir}/knobs`, provider());
    fake.script({ text: ['Cool ', 'answer.'] });
    const r = await mgpt(['ask', '--temperature', '0.2', '--max-tokens', '30', '-o', 'seed', '7', '-o', 'top_k', '40', 'tune me'], env);
    expect([r.code, r.stdout]).toEqual([0, 'Cool answer.\n']);
    expect(fake.requests.at(-1)!.body).toMatchObject({ temperature: 0.2, max_tokens: 30, seed: 7, top_k: 40 });
    expect(fake.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'tune me' });
    // The odd word after -o's pairs is the TEXT.
    expect((await mgpt(['ask', '-o', 'top_p', '0.5', 'after the pairs'], env)).code).toBe(0);
    expect(fake.requests.at(-1)!.body).toMatchObject({ top_p: 0.5, messages: [{ role: 'user', content: 'after the pairs' }] });
    const whole = await mgpt(['ask', '--no-stream', '--max-tokens', '5', 'all at once'], env);
    expect([whole.code, whole.stdout]).toEqual([0, 'reply: all at once\n']);
    expect((await mgpt(['entities', 'create', '--name', 'tuned'], env)).code).toBe(0);
    expect((await mgpt(['send', 'tuned', '--temperature', '0', '-o', 'stop', '["END"]', 'a turn'], env)).code).toBe(0);
    expect(fake.requests.at(-1)!.body).toMatchObject({ temperature: 0, stop: ['END'] });
    const bad = await mgpt(['send', 'tuned', '--temperature', 'hot', 'nope'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('temperature must be a number from 0 to 2 (got "hot")')]);
    expect(JSON.parse((await mgpt(['history', 'tuned', '--json'], env)).stdout).data.map((m: { content: string }) => m.content)).toEqual(['a turn', 'reply: a turn']);
  });

  it('ask -m takes any model added with mgpt models add, and refuses an unknown one with a hint', async () => {
    const env = cliEnv(`${dir}/named`);
    expect((await mgpt(['models', 'add', 'faker', '--provider', 'openai', '--base-url', fake.url, '--model', 'fake-named'], env)).code).toBe(0);
    const r = await mgpt(['ask', '-m', 'faker', 'named model'], env);
    expect([r.code, r.stdout]).toEqual([0, 'reply: named model\n']);
    expect(fake.requests.at(-1)!.body.model).toBe('fake-named');
    const json = JSON.parse((await mgpt(['ask', '-m', 'faker', '--json', 'as json'], env)).stdout);
    expect(json).toMatchObject({ object: 'chat.completion', model: 'faker', choices: [{ message: { content: 'reply: as json' } }] });
    const unknown = await mgpt(['ask', '-m', 'nope', 'hi'], env);
    expect([unknown.code, unknown.stderr]).toEqual([4, expect.stringMatching(/The model `nope` does not exist[\s\S]*mgpt models/)]);
    expect(unknown.stderr).not.toContain('echo provider');
  });

  it('works on the remote backend against mgpt serve (the answer arrives whole)', async () => {
    const serverEnv = cliEnv(`${dir}/server`, provider());
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    try {
      const client = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
      const r = await mgpt(['ask', 'over the wire', '-s', 'Be kind.'], client);
      expect([r.code, r.stdout]).toEqual([0, 'reply: over the wire\n']);
      expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Be kind.' });
      // The knobs over the wire: the server's engine checks them as the local one does.
      const tuned = await mgpt(['ask', '--temperature', '0.3', '-o', 'top_k', '9', 'tuned remotely'], client);
      expect([tuned.code, tuned.stdout]).toEqual([0, 'reply: tuned remotely\n']);
      expect(fake.requests.at(-1)!.body).toMatchObject({ temperature: 0.3, top_k: 9 });
      expect((await mgpt(['entities', 'create', '--name', 'far'], client)).code).toBe(0);
      expect((await mgpt(['send', 'far', '--max-tokens', '8', 'remote turn'], client)).code).toBe(0);
      expect(fake.requests.at(-1)!.body.max_tokens).toBe(8);
      for (const args of [['ask', '--temperature', 'hot', 'x'], ['send', 'far', '--temperature', 'hot', 'x']]) {
        const bad = await mgpt(args, client);
        expect([bad.code, bad.stderr], args.join(' ')).toEqual([2, expect.stringContaining('temperature must be a number from 0 to 2 (got "hot")')]);
      }
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });
});
