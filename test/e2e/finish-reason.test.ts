import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteBackend } from '../../src/backends/remote/remote-backend.js';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { collect } from '../helpers/engine.js';
import { type FakeOpenAI, HALF_CHAR_TOKENS, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// A reply cut at the route's maxTokens says so everywhere: provider -> engine -> SSE, buffered,
// the remote backend, --json, the notice on stderr, the universe response and its log.
const dir = tempDir('mgpt-finish-');
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;
let env: Record<string, string>;
const json = (s: string) => JSON.parse(s);

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // Replies longer than max_tokens words are cut with finish_reason "length".
  fake.limit = { nCtx: 1_000_000, ...HALF_CHAR_TOKENS };
  engine = openEngineSync({ db: join(dir, 'served.db'), route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'm', maxRetries: 0, maxTokens: 3 }) });
  key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.logs:read'])).key!;
  server = await listen(engine, '127.0.0.1', 0);
  env = cliEnv(dir, { MGPT_PROMPTS_DIR: join(dir, 'prompts') });
  for (const id of ['mgpt-1-27b', 'game-1-lite-frozen']) {
    expect((await mgpt(['config', 'set', `models.${id}.baseUrl`, fake.url], env)).code).toBe(0);
    expect((await mgpt(['config', 'set', `models.${id}.maxTokens`, '3'], env)).code).toBe(0);
  }
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

describe('finish_reason length, end to end', () => {
  it('over HTTP: the SSE final chunk, the buffered completion and the remote backend', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const sse = await fetch(`${server.url}/v1/entities/${e.id}/messages`, {
      method: 'POST', headers, body: JSON.stringify({ content: 'one two three four', stream: true }),
    });
    const body = await sse.text();
    expect(sse.status, body).toBe(200);
    const frames = body.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)));
    const finals = frames.filter((f) => f.choices[0]?.finish_reason);
    expect(finals.map((f) => f.choices[0].finish_reason)).toEqual(['length']);
    expect(frames.at(-1).usage.completion_tokens).toBe(3);

    const buffered = await fetch(`${server.url}/v1/entities/${e.id}/messages`, {
      method: 'POST', headers, body: JSON.stringify({ content: 'five six seven eight', stream: false }),
    });
    expect((await buffered.json()).choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'reply: five six' } });

    const remote = new RemoteBackend({ baseUrl: `${server.url}/api/mgpt`, entitiesUrl: `${server.url}/v1`, apiKey: key });
    const events = await collect(remote.sendMessage(e.id, { content: 'nine ten eleven twelve' }));
    const done = events.find((x) => x.type === 'done') as Extract<TurnEvent, { type: 'done' }>;
    expect(done.completion.choices[0].finish_reason).toBe('length');
    await remote.close();
  });

  it('on the command line: --json keeps it, and send prints the notice on stderr', async () => {
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const plain = await mgpt(['send', id, 'one two three four'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('reply: one two\n');
    expect(plain.stderr).toMatch(/^warning: reply cut at 3 tokens/m);
    const j = await mgpt(['send', id, 'five six seven eight', '--json'], env);
    expect(json(j.stdout).choices[0].finish_reason).toBe('length');
    expect(j.stderr).toMatch(/reply cut at 3 tokens/);
    const whole = await mgpt(['send', id, 'hi'], env);
    expect(whole.stderr).not.toMatch(/cut/);
  });

  it('names the limit that cut the reply: the route setting that holds it, --max-tokens, or the server itself', async () => {
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const route = await mgpt(['send', id, 'one two three four'], env);
    expect(route.stderr).toContain('reply cut at 3 tokens: the models.mgpt-1-27b.maxTokens limit (3); raise it with: mgpt config set models.mgpt-1-27b.maxTokens N');
    const asked = await mgpt(['send', id, '--max-tokens', '2', 'one two three four'], env);
    expect(asked.stderr).toContain('reply cut at 2 tokens: the --max-tokens limit (2); raise it with: a larger --max-tokens');

    // A limit from a profile other than the default: the hint sets it in that profile.
    const prof = cliEnv(join(dir, 'profiled'));
    expect((await mgpt(['config', 'set', '--profile', 'small', 'models.mgpt-1-27b.baseUrl', fake.url], prof)).code).toBe(0);
    expect((await mgpt(['config', 'set', '--profile', 'small', 'models.mgpt-1-27b.maxTokens', '3'], prof)).code).toBe(0);
    const pid = (await mgpt(['--profile', 'small', 'entities', 'create'], prof)).stdout.trim();
    const viaProfile = await mgpt(['--profile', 'small', 'send', pid, 'one two three four'], prof);
    expect(viaProfile.stderr).toContain("the profile small's models.mgpt-1-27b.maxTokens limit (3); raise it with: mgpt config set --profile small models.mgpt-1-27b.maxTokens N");

    // Routed to a named model: its entry holds the setting (the id's own maxTokens would be ignored).
    const named = cliEnv(join(dir, 'named'));
    const add = ['models', 'add', 'big', '--provider', 'openai', '--base-url', fake.url, '--model', 'm', '--max-tokens', '3', '--route', 'mgpt-1-27b'];
    expect((await mgpt(add, named)).code).toBe(0);
    const nid = (await mgpt(['entities', 'create'], named)).stdout.trim();
    const viaNamed = await mgpt(['send', nid, 'one two three four'], named);
    expect(viaNamed.stderr).toContain('the models.big.maxTokens limit (3); raise it with: mgpt config set models.big.maxTokens N');

    // No maxTokens anywhere: the server's own limit cut it, and no mgpt setting would help.
    const bare = cliEnv(join(dir, 'bare'));
    expect((await mgpt(['config', 'set', 'models.mgpt-1-27b.baseUrl', fake.url], bare)).code).toBe(0);
    const bid = (await mgpt(['entities', 'create'], bare)).stdout.trim();
    fake.script({ text: 'cut by the server', finishReason: 'length' });
    const server = await mgpt(['send', bid, 'hello'], bare);
    expect(server.stderr).toMatch(/reply cut at \d+ tokens by the model server itself \(mgpt sent no max_tokens\): its own reply limit \(llama-server -n\) or its context/);
    expect(server.stderr).not.toMatch(/config set/);
  });

  it('in a universe: the response diagnostics, a structured reply reported invalid, and the log', async () => {
    writeFileSync(join(dir, 'contract.json'), JSON.stringify({ type: 'json_object' }));
    expect((await mgpt(['prompts', 'add', 'quest', 'You run quests.', '--response-format', join(dir, 'contract.json')], env)).code).toBe(0);
    const u = (await mgpt(['universes', 'create', '--prompt', 'quest'], env)).stdout.trim();
    const r = await mgpt(['respond', u, 'a b c d e', '--structured', '--json'], env);
    expect(r.code).toBe(0);
    const res = json(r.stdout);
    expect(res.diagnostics.provider.finishReason).toBe('length');
    expect(res.diagnostics.structured).toEqual({ valid: false, error: 'the reply was cut off before its JSON ended' });
    expect(res.diagnostics.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/reply cut at 3 tokens/)]));
    expect(r.stderr).toMatch(/^warning: structured output is not valid/m);
    const log = json((await mgpt(['logs', 'show', res.requestLog.id, '--json'], env)).stdout);
    expect(log.response).toMatchObject({ finishReason: 'length', structured: { valid: false } });
  });

  it('a whole structured reply that is not JSON is reported, never passed off as valid', async () => {
    const u = (await mgpt(['universes', 'create', '--prompt', 'quest'], env)).stdout.trim();
    fake.script({ text: 'not json' });
    const res = json((await mgpt(['respond', u, 'go', '--structured', '--json'], env)).stdout);
    expect(res.diagnostics.provider.finishReason).toBe('stop');
    expect(res.diagnostics.structured).toMatchObject({ valid: false, error: expect.stringMatching(/^not JSON/) });
    fake.script({ text: '{"ok": true}' });
    const ok = json((await mgpt(['respond', u, 'go', '--structured', '--json'], env)).stdout);
    expect(ok.diagnostics.structured).toEqual({ valid: true, error: null });
    expect(ok.diagnostics.warnings).toBeUndefined();
  });
});
