import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../../src/core/errors.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
let env: Record<string, string>;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
});
afterAll(() => fake.close());

const json = (s: string) => JSON.parse(s);

describe('mgpt basics', () => {
  it('--version and --help with examples', async () => {
    const v = await mgpt(['--version'], env);
    expect(v).toMatchObject({ code: 0, stdout: `${JSON.parse(readFileSync('package.json', 'utf8')).version}\n`, stderr: '' });
    const h = await mgpt(['send', '--help'], env);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/Usage: mgpt send \[options\] <entity> \[text\]/);
    expect(h.stdout).toMatch(/Examples:\n {2}\$ mgpt send/);
  });

  it('usage errors exit 2 with an error line', async () => {
    const r = await mgpt(['entities', 'frobnicate'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: unknown command 'frobnicate'/m);
    const r2 = await mgpt(['send'], env);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/error: missing required argument 'entity'/);
  });
});

describe('config and models', () => {
  it('sets, gets, lists, unsets; masks secrets; writes mode 0600', async () => {
    const cfgEnv = cliEnv(join(dir, 'cfg'));
    const path = (await mgpt(['config', 'path'], cfgEnv)).stdout.trim();
    expect(path).toBe(join(dir, 'cfg', 'config', 'config.json'));
    expect((await mgpt(['config', 'set', 'engine.windowBudget', '8000'], cfgEnv)).code).toBe(0);
    expect((await mgpt(['config', 'set', 'models.mgpt-1-27b.apiKey', 'sk-live-1234567890abcdef'], cfgEnv)).code).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect((await mgpt(['config', 'get', 'engine.windowBudget'], cfgEnv)).stdout).toBe('8000\n');
    // The settings in effect, defaults included, each with where it comes from.
    const list = json((await mgpt(['config', 'list', '--json'], cfgEnv)).stdout);
    expect(list.profile).toBe('default');
    expect(list.settings).toMatchObject({ 'engine.windowBudget': 8000, 'models.mgpt-1-27b.apiKey': 'sk-live-123456…', backend: 'local', 'engine.transcriptCap': 1_000_000 });
    expect(list.sources).toMatchObject({ 'engine.windowBudget': 'profile default', backend: 'default', db: 'env MGPT_DB' });
    const fromEnv = json((await mgpt(['config', 'get', 'engine.windowBudget', '--json'], { ...cfgEnv, MGPT_WINDOW_BUDGET: '9000' })).stdout);
    expect(fromEnv).toEqual({ key: 'engine.windowBudget', value: '9000', source: 'env MGPT_WINDOW_BUDGET' });
    const typo = await mgpt(['--profile', 'wrok', 'config', 'get', 'backend'], cfgEnv);
    expect([typo.code, typo.stdout, typo.stderr]).toEqual([0, 'local\n', expect.stringContaining('warning: profile wrok does not exist')]);
    expect((await mgpt(['config', 'list'], cfgEnv)).stdout).not.toMatch(/abcdef/);
    const bad = await mgpt(['config', 'set', 'engine.windowBudget', 'lots'], cfgEnv);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/must be a positive integer/)]);
    expect((await mgpt(['config', 'set', 'nope', '1'], cfgEnv)).code).toBe(2);
    expect((await mgpt(['config', 'unset', 'engine.windowBudget'], cfgEnv)).code).toBe(0);
    expect((await mgpt(['config', 'get', 'engine.windowBudget', '--json'], cfgEnv)).stdout).toBe(JSON.stringify({ key: 'engine.windowBudget', value: 32000, source: 'default' }, null, 2) + '\n');
    expect((await mgpt(['config', 'get', 'baseUrl'], cfgEnv)).code).toBe(4);
    // A new entity takes the configured budget.
    await mgpt(['config', 'set', 'engine.windowBudget', '777'], cfgEnv);
    const e = json((await mgpt(['entities', 'create', '--json'], cfgEnv)).stdout);
    expect(e.window.budget_tokens).toBe(777);
  });

  it('lists models with their routes', async () => {
    const r = await mgpt(['models', '--json'], env);
    const m = json(r.stdout).data.find((x: any) => x.id === 'mgpt-1-27b');
    expect(m).toMatchObject({ kind: 'entity', provider: 'openai', model: 'fake-model', baseUrl: fake.url });
    const plain = await mgpt(['models'], cliEnv(join(dir, 'plain')));
    expect(plain.stdout).toMatch(/^mgpt-1-27b\tentity\techo\tmgpt-1-27b\t-\t-\t-$/m);
  });

  it('shows what turns learned about a model, and forgets it on reset-calibration', async () => {
    const engine = openEngineSync({ db: env.MGPT_DB, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model' }) });
    await engine.deps.calibration.learn(`openai:${fake.url}#fake-model`, new ContextOverflowError('too long', { contextTokens: 1024, promptTokens: 1500 }), 1000, 0);
    await engine.close();
    const learned = json((await mgpt(['models', '--json'], env)).stdout).data.find((x: any) => x.id === 'mgpt-1-27b');
    expect(learned).toMatchObject({ contextSize: null, learned: { contextTokens: 1024, contextSource: 'server', factor: 1.5 } });
    expect((await mgpt(['models'], env)).stdout).toMatch(/^mgpt-1-27b\tentity\topenai\tfake-model\t\S+\t1024 \(learned\)\t1\.50$/m);
    const reset = await mgpt(['models', 'reset-calibration', 'mgpt-1-27b'], env);
    expect([reset.code, reset.stderr]).toEqual([0, 'forgot what turns had learned about the model behind mgpt-1-27b; the next turns learn it again\n']);
    expect(json((await mgpt(['models', '--json'], env)).stdout).data.find((x: any) => x.id === 'mgpt-1-27b').learned).toBeNull();
    const again = await mgpt(['models', 'reset-calibration', 'mgpt-1-27b'], env);
    expect(again.stderr).toBe('nothing was learned about the model behind mgpt-1-27b\n');
    const neither = await mgpt(['models', 'reset-calibration'], env);
    expect([neither.code, neither.stderr]).toEqual([2, 'error: name one model, or pass --all\nhint: mgpt models reset-calibration mgpt-1-27b\n']);
  });
});

describe('entities, send, history, window', () => {
  let id: string;

  it('creates (instructions from a file), lists, shows', async () => {
    writeFileSync(join(dir, 'persona.md'), 'You are Ada.\n');
    const c = await mgpt(['entities', 'create', '--name', 'ada', '-f', join(dir, 'persona.md')], env);
    expect(c.code).toBe(0);
    id = c.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const list = json((await mgpt(['entities', 'list', '--json'], env)).stdout);
    expect(list.data.map((e: any) => e.id)).toContain(id);
    expect((await mgpt(['entities', 'list'], env)).stdout).toMatch(new RegExp(`^${id}\\tada\\t0\\t0\\tactive\\t`, 'm'));
    const show = json((await mgpt(['entities', 'show', 'ada', '--json'], env)).stdout);
    expect(show).toMatchObject({ id, name: 'ada', instructions: 'You are Ada.', window: { tokens: 0, blocks: 0 } });
    const bad = await mgpt(['entities', 'create', '--model', 'gpt-4o'], env);
    expect([bad.code, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toMatch(/^error: unsupported model "gpt-4o"/);
  });

  it('sends from an argument, stdin and a file; buffered and JSON; replays an idempotency key', async () => {
    fake.script({ text: ['Hello', ', ', 'Bob', '.'] });
    const a = await mgpt(['send', id, 'I am Bob'], env);
    expect(a).toMatchObject({ code: 0, stdout: 'Hello, Bob.\n' });
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: 'I am Bob' },
    ]);
    const piped = await mgpt(['send', id, '-'], env, 'hi\n');
    expect(piped).toMatchObject({ code: 0, stdout: 'reply: hi\n' });
    // A real shell pipe (async: the fake provider lives in this process and must keep answering).
    const sh = await new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', `echo hi | "${process.execPath}" bin/mgpt send ${id} -`], { env }, (err, out) => (err ? reject(err) : resolve(out))),
    );
    expect(sh).toBe('reply: hi\n');
    writeFileSync(join(dir, 'msg.txt'), 'from a file\n');
    expect((await mgpt(['send', 'ada', '-f', join(dir, 'msg.txt'), '--no-stream'], env)).stdout).toBe('reply: from a file\n');
    const j = json((await mgpt(['send', id, 'as json', '--json', '--idempotency-key', 'k-1'], env)).stdout);
    expect(j).toMatchObject({ object: 'chat.completion', entity_id: id, choices: [{ message: { content: 'reply: as json' } }] });
    const calls = fake.requests.length;
    const replay = json((await mgpt(['send', id, 'as json', '--json', '--idempotency-key', 'k-1'], env)).stdout);
    expect(replay).toEqual(j);
    expect(fake.requests.length).toBe(calls);
    const streamedReplay = await mgpt(['send', id, 'as json', '--idempotency-key', 'k-1'], env);
    expect(streamedReplay.stdout).toBe('reply: as json\n');
    const clash = await mgpt(['send', id, 'other', '--idempotency-key', 'k-1'], env);
    expect([clash.code, clash.stderr]).toEqual([2, expect.stringMatching(/already used with different content/)]);
    const none = await mgpt(['send', id], { ...env });
    expect(none.code).toBe(2);
  });

  it('pages history and shows the window', async () => {
    const h = json((await mgpt(['history', id, '--limit', '3', '--json'], env)).stdout);
    expect(h).toMatchObject({ object: 'list', entity_id: id, has_more: true, next_after: 3 });
    expect(h.data.map((m: any) => m.seq)).toEqual([1, 2, 3]);
    const next = json((await mgpt(['history', id, '--after', '3', '--limit', '500', '--json'], env)).stdout);
    expect(next.data[0].seq).toBe(4);
    expect(next.has_more).toBe(false);
    const all = json((await mgpt(['history', id, '--all', '--json'], env)).stdout);
    expect(all.data.map((m: any) => m.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    const text = (await mgpt(['history', id, '--limit', '2'], env)).stdout;
    expect(text).toMatch(/^#1 user \d+ tok · \S+\nI am Bob\n\n#2 assistant \d+ tok · \S+\nHello, Bob\.\n\n$/);
    // --last N: the newest N messages, oldest first, in one list (as --all merges pages).
    const last = json((await mgpt(['history', id, '--last', '3', '--json'], env)).stdout);
    expect(last.data.map((m: any) => m.seq)).toEqual([8, 9, 10]);
    expect(json((await mgpt(['history', id, '--last', '50', '--json'], env)).stdout).data).toHaveLength(10);
    expect((await mgpt(['history', id, '--last', '1'], env)).stdout).toMatch(/^#10 assistant /);
    for (const bad of [['--limit', '0'], ['--limit', '501'], ['--after', '-1'], ['--limit', 'x'], ['--last', '0'], ['--last', '2', '--all'], ['--last', '2', '--after', '3']]) {
      expect((await mgpt(['history', id, ...bad], env)).code, bad.join(' ')).toBe(2);
    }
    const w = json((await mgpt(['window', id, '--json'], env)).stdout);
    expect(w).toMatchObject({ entity_id: id, object: 'entity.window', budget_tokens: 32000 });
    expect(w.blocks).toHaveLength(10);
    // Every part of the next request: the instructions first, then the blocks.
    const wt = (await mgpt(['window', id], env)).stdout.split('\n');
    expect(wt[0]).toMatch(/^instructions\t-\t\d+\tsystem\tYou are Ada\.$/);
    expect(wt[1]).toMatch(/^message\t1\t\d+\tuser\tI am Bob$/);
  });

  it('exports tar and JSON, imports them back', async () => {
    const tarPath = join(dir, 'ada.tar');
    const ex = json((await mgpt(['export', 'ada', '-o', tarPath, '--json'], env)).stdout);
    expect(ex).toMatchObject({ entity_id: id, format: 'tar', path: tarPath });
    expect(execFileSync('tar', ['-tf', tarPath], { encoding: 'utf8' })).toBe('manifest.json\ntranscript.json\nwindow.json\nrotations.json\nmemory.json\n');
    const jsonPath = join(dir, 'ada.json');
    expect((await mgpt(['export', id, '-o', jsonPath], env)).code).toBe(0);
    expect(json(readFileSync(jsonPath, 'utf8')).manifest.entity.id).toBe(id);
    const stdoutTar = await mgpt(['export', id, '-o', '-', '--format', 'tar'], env);
    expect(stdoutTar.stdout.startsWith('manifest.json')).toBe(true);
    const unknown = await mgpt(['export', id, '-o', join(dir, 'ada.zip')], env);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/cannot tell the format/)]);
    const imported = await mgpt(['import', tarPath], env);
    expect(imported.code).toBe(0);
    const copy = json((await mgpt(['entities', 'show', imported.stdout.trim(), '--json'], env)).stdout);
    // Beside its original the copy is numbered, as names are unique (issue 37).
    expect(copy).toMatchObject({ name: 'ada (2)', transcript: { messages: 10 } });
    expect(imported.stderr).toContain('imported as "ada (2)"');
    const fromJson = json((await mgpt(['import', jsonPath, '--json'], env)).stdout);
    expect(fromJson.transcript.messages).toBe(10);
    writeFileSync(join(dir, 'broken.tar'), readFileSync(tarPath).subarray(0, 1000));
    const broken = await mgpt(['import', join(dir, 'broken.tar')], env);
    expect([broken.code, broken.stderr]).toEqual([2, expect.stringMatching(/^error: import: not a valid export archive/)]);
    expect((await mgpt(['import', join(dir, 'missing.tar')], env)).code).toBe(2);
  });

  it('maps 402 to exit 6 and a provider outage to exit 7, changing nothing', async () => {
    const metered = cliEnv(join(dir, 'metered'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const e = (await mgpt(['entities', 'create'], metered)).stdout.trim();
    const top = json((await mgpt(['accounts', 'topup', 'local', '0.000001', '--json'], metered)).stdout);
    expect(top).toMatchObject({ id: 'local', balanceUsd: 0.000001 });
    const poor = await mgpt(['send', e, 'a message with many words that costs more than a millionth of a dollar'], metered);
    expect(poor.code).toBe(6);
    // The facts once: the balance, the cost and what is missing, then the hint.
    expect(poor.stderr).toMatch(/^error: insufficient balance: \$0\.000001 left, this message costs \$0\.0000\d{2,3}, \$0\.0000\d{2,3} missing\nhint: add funds: mgpt accounts topup local 5\n$/);
    const accounts = json((await mgpt(['accounts', 'list', '--json'], metered)).stdout);
    expect(accounts.data[0]).toMatchObject({ id: 'local', balanceUsd: 0.000001 });
    const acme = json((await mgpt(['accounts', 'create', 'acme', '--json'], metered)).stdout);
    expect(acme).toMatchObject({ name: 'acme', balanceUsd: null, id: expect.stringMatching(/^acct_/) });
    expect((await mgpt(['accounts', 'create', 'acme'], metered)).code).toBe(5);
    expect((await mgpt(['accounts', 'topup', 'acme', '-3'], metered)).code).toBe(2);
    expect((await mgpt(['accounts', 'topup', 'nobody', '3'], metered)).code).toBe(4);
    expect((await mgpt(['accounts', 'list'], metered)).stdout).toMatch(/^acct_\S+\tacme\tunmetered\t/m);
    const down = cliEnv(join(dir, 'metered'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: 'http://127.0.0.1:9/v1' });
    await mgpt(['accounts', 'topup', 'local', '5'], down);
    const r = await mgpt(['send', e, 'hello?'], down);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/^error: cannot reach the model provider/m);
    expect(json((await mgpt(['history', e, '--json'], down)).stdout).data).toEqual([]);
  });

  it('uses echo with no configuration, and says so on stderr only', async () => {
    const bare = cliEnv(join(dir, 'bare'));
    const e = (await mgpt(['entities', 'create'], bare)).stdout.trim();
    const r = await mgpt(['send', e, 'just echo'], bare);
    expect(r).toMatchObject({ code: 0, stdout: 'just echo\n' });
    expect(r.stderr).toMatch(/built-in echo provider.*mgpt config set models\.mgpt-1-27b/);
  });

  it('deletes', async () => {
    const del = json((await mgpt(['entities', 'delete', id, '--yes', '--json'], env)).stdout);
    expect(del).toEqual({ id, object: 'entity', deleted: true });
    const gone = await mgpt(['entities', 'show', id], env);
    expect([gone.code, gone.stderr]).toEqual([4, expect.stringMatching(/^error: no entity/)]);
    expect((await mgpt(['entities', 'delete', id], env)).code).toBe(4);
  });
});

describe('entities update', () => {
  it('updates the budget, name and instructions; refuses bad input with exit 2 and an unknown entity with 4', async () => {
    const env = cliEnv(join(dir, 'update'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const id = (await mgpt(['entities', 'create', '--name', 'ada', '--instructions', 'You are Ada.'], env)).stdout.trim();
    expect((await mgpt(['send', 'ada', 'hello there'], env)).code).toBe(0);
    const r = await mgpt(['entities', 'update', 'ada', '--budget', '500', '--json'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const updated = json(r.stdout);
    expect(updated).toMatchObject({ id, object: 'entity', name: 'ada', model: 'mgpt-1-27b', window: { budget_tokens: 500, tokens: expect.any(Number), blocks: 2 }, transcript: { messages: 2 } });
    // show is the entity as update returned it, with its pinned memory beside it.
    expect(json((await mgpt(['entities', 'show', id, '--json'], env)).stdout)).toEqual({ ...updated, pinned_memory: expect.objectContaining({ memory: [], tokens: 0 }) });
    // Piped: the id alone on stdout; instructions from stdin as with create.
    const renamed = await mgpt(['entities', 'update', 'ada', '--name', 'Ada L', '--instructions', '-'], env, 'You are Ada, briefly.\n');
    expect(renamed).toMatchObject({ code: 0, stdout: `${id}\n`, stderr: '' });
    expect(json((await mgpt(['entities', 'show', 'Ada L', '--json'], env)).stdout)).toMatchObject({ name: 'Ada L', instructions: 'You are Ada, briefly.', window: { budget_tokens: 500 } });
    const refusals = [
      [['entities', 'update', id, '--budget', '5'], 2, /^error: budget_tokens must be an integer from 16 to 1000000, got 5\n$/],
      [['entities', 'update', id, '--budget', 'lots'], 2, /^error: --budget must be an integer, got "lots"\n$/],
      [['entities', 'update', id], 2, /^error: nothing to update\nhint: give --name/],
      [['entities', 'update', id, '--name', 'n'.repeat(201)], 2, /^error: name is 201 characters; the limit is 200\n$/],
      [['entities', 'update', 'nobody', '--budget', '500'], 4, /^error: no entity "nobody"\nhint: list entities with: mgpt entities list\n/],
    ] as const;
    for (const [args, code, stderr] of refusals) {
      const bad = await mgpt([...args], env);
      expect([bad.code, bad.stdout], args.join(' ')).toEqual([code, '']);
      expect(bad.stderr, args.join(' ')).toMatch(stderr);
    }
  });
});

describe('the first turn of a process', () => {
  it('stores exact token counts although it did not wait for the tokenizer to load', async () => {
    const { loadTokenEstimator } = await import('../../src/core/text/tokens.js');
    const tok = await loadTokenEstimator();
    const id = (await mgpt(['entities', 'create', '--name', 'counts'], env)).stdout.trim();
    const text = 'Ünïcödé and emoji 🍅🍅 make bytes and tokens differ: ' + 'word '.repeat(30);
    expect((await mgpt(['send', id, text], env)).code).toBe(0);
    const h = json((await mgpt(['history', id, '--json'], env)).stdout);
    expect(h.data[0].content).toBe(text);
    expect(h.data.map((m: { tokens: number }) => m.tokens)).toEqual(h.data.map((m: { content: string }) => tok.count(m.content)));
    const w = json((await mgpt(['window', id, '--json'], env)).stdout);
    expect(w.tokens).toBe(tok.count(text) + tok.count(h.data[1].content));
    // Over the budget by tokens (not just by bytes): refused with the exact count.
    const big = 'lorem '.repeat(40_000);
    const r = await mgpt(['send', id, '-'], env, big);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`message is ${tok.count(big)} tokens, larger than the window budget`);
  });
});
