import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect } from '../helpers/engine.js';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// `mgpt window` and its parts, --prompt, the recall bound's flags and the recalled lines' text, on
// the local backend and as a remote client of a spawned `mgpt serve`.
const dir = tempDir();
let fake: FakeOpenAI;
let server: ReturnType<typeof spawnMgpt> | undefined;
let url = '';
const envs: Record<string, Record<string, string>> = {};
const INSTRUCTIONS = 'You are Ada, a patient tutor.';
const FACT = 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.';
const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

/** An `auto` entity (instructions, pinned memory, recall bound 60) whose first exchange the window has folded away. */
async function seed(db: string): Promise<void> {
  const engine = openEngineSync({ db, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model' }) });
  try {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'margaret', instructions: INSTRUCTIONS, recall: 'auto', recall_tokens: 60 }, 'local');
    await engine.entities.update(id, { budget_tokens: 300 }, 'local');
    await engine.memory.set(id, 'user', 'Ada lives in Porto', 'local');
    await collect(engine.entities.send(id, { content: FACT }, 'local'));
    for (let i = 0; i < 30; i++) await collect(engine.entities.send(id, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
  } finally {
    await engine.close();
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const provider = { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' };
  envs.local = cliEnv(`${dir}/local`, provider);
  await seed(envs.local.MGPT_DB);
  const serverEnv = cliEnv(`${dir}/server`, { ...provider, MGPT_DB: `${dir}/server/served.db` });
  await seed(serverEnv.MGPT_DB);
  const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
  server = spawnMgpt(['serve', '--port', '0'], serverEnv);
  url = await new Promise<string>((resolve) => server!.stdout!.once('data', (d) => resolve(String(d).trim())));
  envs.remote = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key, MGPT_DB: `${dir}/client/never.db` });
  envs.key = { key };
}, 120_000);
afterAll(async () => {
  server?.kill('SIGTERM');
  await server?.result;
  await fake.close();
});

const json = (s: string) => JSON.parse(s);

describe.each(['local', 'remote'])('on the %s backend', (backend) => {
  const env = () => envs[backend];

  it('--recall-tokens on create and update; a bad value exits 2 with the range and changes nothing', async () => {
    expect(json((await mgpt(['entities', 'show', 'margaret', '--json'], env())).stdout).recall_tokens).toBe(60);
    expect((await mgpt(['entities', 'show', 'margaret'], env())).stdout).toMatch(/^recall +auto: .*; at most 60 tokens a turn$/m);
    const made = json((await mgpt(['entities', 'create', '--name', `b-${backend}`, '--recall', 'auto', '--recall-tokens', '500', '--json'], env())).stdout);
    expect(made.recall_tokens).toBe(500);
    expect(json((await mgpt(['entities', 'update', `b-${backend}`, '--recall-tokens', '80', '--json'], env())).stdout).recall_tokens).toBe(80);
    for (const [args, message] of [
      [['entities', 'update', `b-${backend}`, '--recall-tokens', '0'], /recall_tokens must be an integer from 1 to 16000 \(half of budget_tokens 32000\), got 0/],
      [['entities', 'update', `b-${backend}`, '--recall-tokens', 'lots'], /--recall-tokens must be an integer, got "lots"/],
      [['entities', 'create', '--name', `c-${backend}`, '--recall-tokens', '16001'], /got 16001/],
    ] as const) {
      const r = await mgpt([...args], env());
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(json((await mgpt(['entities', 'show', `b-${backend}`, '--json'], env())).stdout).recall_tokens).toBe(80);
    expect((await mgpt(['entities', 'show', `c-${backend}`], env())).code).toBe(4);
  });

  it('send --verbose and --json show the recalled lines\' text, within the bound', async () => {
    const first = await mgpt(['--verbose', 'send', 'margaret', 'Which city is my sister Margaret living in these days?'], env());
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/^recalled \d+ messages? \(#1(, #\d+)*\), \d+ tokens$/m);
    expect(first.stderr).toContain(`\n  #1 user: ${FACT}\n`);
    // The fact is in view now (in the message that recalled it), so the next turn does not recall it
    // again; what it does recall comes with its text, as the transcript holds it (a cut line, its start).
    const asked = json((await mgpt(['send', 'margaret', 'Does Margaret still teach chemistry in Lisbon?', '--json'], env())).stdout);
    const recalled = (asked.recalled ?? []) as Array<{ seq: number; role: string; tokens: number; content: string }>;
    expect(recalled.some((m) => m.seq === 1)).toBe(false);
    expect(recalled.reduce((n, m) => n + m.tokens, 0)).toBeLessThanOrEqual(60);
    const transcript = new Map((json((await mgpt(['history', 'margaret', '--all', '--json'], env())).stdout).data as Array<{ seq: number; content: string }>).map((m) => [m.seq, m.content]));
    for (const m of recalled) expect(transcript.get(m.seq)!.startsWith(m.content)).toBe(true);
  });

  it('window: every part of the next request with its tokens; --json carries them; --prompt is the next request, message for message', async () => {
    const rows = (await mgpt(['window', 'margaret'], env())).stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(rows[0]).toEqual(['instructions', '-', expect.stringMatching(/^\d+$/), 'system', INSTRUCTIONS]);
    expect(rows[1]).toEqual(['memory', '-', expect.stringMatching(/^\d+$/), 'system', '1 pinned block (mgpt memory list)']);
    expect(rows[2][0]).toBe('summary');
    // The live messages, then the recalled lines the request still carries (none, or the earlier turns' recall in view).
    const kinds = rows.slice(3).map((r) => r[0]).join(' ');
    expect(kinds).toMatch(/^message( message)*( recalled)*$/);
    const w = json((await mgpt(['window', 'margaret', '--json'], env())).stdout);
    expect(w).toMatchObject({ object: 'entity.window', budget_tokens: 300, prompt_tokens: expect.any(Number) });
    expect(w.prompt).toBeUndefined();
    expect(Object.keys(w.parts)).toEqual(['instructions', 'memory', 'summaries', 'messages', 'recalled']);
    expect(w.prompt_tokens).toBe(Object.values(w.parts as Record<string, { tokens: number }>).reduce((n, p) => n + p.tokens, 0));
    expect(w.parts.summaries.tokens + w.parts.messages.tokens).toBe(w.tokens);
    // Each part's row (a recalled line's row counts the line; the part counts its preamble too).
    expect(rows.filter((r) => r[0] !== 'recalled').map((r) => Number(r[2])).reduce((a, b) => a + b, 0) + w.parts.recalled.tokens).toBe(w.prompt_tokens);
    expect(rows.filter((r) => r[0] === 'recalled').map((r) => Number(r[1]))).toEqual(w.parts.recalled.lines.map((l: { seq: number }) => l.seq));

    // Room for the next message, so its turn does not rotate (a rotation would change the request).
    expect((await mgpt(['entities', 'update', 'margaret', '--budget', '4000'], env())).code).toBe(0);
    const prompt = json((await mgpt(['window', 'margaret', '--prompt', '--json'], env())).stdout);
    const readable = (await mgpt(['window', 'margaret', '--prompt'], env())).stdout;
    expect(readable).toMatch(/^\[1\] system \(\d+ tokens\)\nYou are Ada, a patient tutor\.\n/);
    expect(readable).toContain('user: Ada lives in Porto');
    expect(readable.match(/^\[\d+\] /gm)).toHaveLength(prompt.length);
    // A message that recalls nothing: the request is exactly the printed messages, then it.
    const before = fake.requests.length;
    expect((await mgpt(['send', 'margaret', 'Do you enjoy astronomy, telescopes and comets?'], env())).code).toBe(0);
    const sent = fake.requests.slice(before).filter((r) => !isSummaryRequest(r.body));
    expect(sent.at(-1)!.body.messages).toEqual([...prompt, { role: 'user', content: 'Do you enjoy astronomy, telescopes and comets?' }]);
  });

  it('window --at SEQ --prompt prints the request that turn sent, its recall message included', async () => {
    // The turn at seq 63 recalled (the first send above).
    const at = json((await mgpt(['window', 'margaret', '--at', '63', '--json'], env())).stdout);
    const printed = json((await mgpt(['window', 'margaret', '--at', '63', '--prompt', '--json'], env())).stdout);
    expect(printed).toEqual(at.prompt);
    expect(printed.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/Which city is my sister Margaret living in these days\?$/) });
    const readable = (await mgpt(['window', 'margaret', '--at', '63', '--prompt'], env())).stdout;
    expect(readable).toContain('<recalled>\nRecalled from earlier in this conversation:');
    expect(readable).toContain(FACT);
  });
});

describe('GET /v1/entities/{id}/window over HTTP', () => {
  it('the seed\'s body without the flag; ?prompt=true adds the parts and the messages; a flag that is not true or false is a 400', async () => {
    const id = json((await mgpt(['entities', 'show', 'margaret', '--json'], envs.remote)).stdout).id;
    const get = async (q: string) => fetch(`${url}/v1/entities/${id}/window${q}`, { headers: { Authorization: `Bearer ${envs.key.key}` } });
    const seedBody = await (await get('')).json();
    expect(Object.keys(seedBody).sort()).toEqual(['blocks', 'budget_tokens', 'entity_id', 'object', 'tokens']);
    const withPrompt = await (await get('?prompt=true')).json();
    expect(withPrompt).toMatchObject({ ...seedBody, prompt_tokens: expect.any(Number), parts: expect.any(Object), prompt: expect.any(Array) });
    expect(await (await get('?prompt=false')).json()).toEqual(seedBody);
    const bad = await get('?prompt=yes');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('prompt must be true or false');
  });
});
