import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityCompletion } from '../../src/core/wire/entity-types.js';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/**
 * What automatic recall (issue 32) shows a server's callers: the Mgpt-Recalled header on the
 * OpenAI facade, streamed or not, and the recall counters of /metrics.
 */
const dir = tempDir('mgpt-recall-visible-');
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let key: string;
let id: string;

const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  engine = makeEngine(dir, { fake });
  key = (await engine.keys.create('local', ['mgpt.responses:create', 'mgpt.logs:read'])).key!;
  server = await listen(engine, '127.0.0.1', 0, { metricsEndpoint: true });
  id = await folded();
});

/** An entity whose first message (a fact about Margaret) is folded out of its window. */
async function folded(): Promise<string> {
  const made = (await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local')).id;
  await engine.entities.update(made, { budget_tokens: 300 }, 'local');
  await collect(engine.entities.send(made, { content: 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.' }, 'local'));
  for (let i = 0; i < 30; i++) await collect(engine.entities.send(made, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
  return made;
}
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const chat = (content: string, stream: boolean, entity = id) => post('/v1/chat/completions', { model: `entity:${entity}`, stream, messages: [{ role: 'user', content }] });

/** The lines the provider's last request got recalled, read from its new user message itself. */
function promptRecalled(): number {
  const prompt = fake.requests.filter((r) => !JSON.stringify(r.body.messages).includes('Summarize')).at(-1)!.body.messages as Array<{ content: string }>;
  const block = /^<recalled>\n([\s\S]*?)\n<\/recalled>\n\n/.exec(prompt.at(-1)!.content)?.[1];
  return block ? block.split('\n').filter((l) => /^#\d+ (user|assistant) \(/.test(l)).length : 0;
}

async function counters(): Promise<Record<string, number>> {
  const families = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
  const of = (name: string) => Number(families.find((f) => f.name === name)?.metrics[0]?.value ?? 0);
  return { turns: of('mgpt_recall_turns_total'), messages: of('mgpt_recalled_messages_total'), tokens: of('mgpt_recalled_tokens_total') };
}

describe('recall made visible', () => {
  it('Mgpt-Recalled on the facade: the count the prompt got, buffered and streamed (with the first event); absent when nothing was recalled', async () => {
    const buffered = await chat('Which city is my sister living in these days?', false);
    expect(buffered.status).toBe(200);
    await buffered.json();
    const n = promptRecalled();
    expect(n).toBeGreaterThan(0);
    expect(buffered.headers.get('mgpt-recalled')).toBe(String(n));

    // A line in view is not recalled again: the streamed ask goes to an entity that has not recalled #1 yet.
    const streamed = await chat('Does my sister Margaret still teach chemistry in Lisbon?', true, await folded());
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await streamed.text();
    expect(promptRecalled()).toBeGreaterThan(0);
    expect(streamed.headers.get('mgpt-recalled')).toBe(String(promptRecalled()));

    const nothing = await chat('Do you enjoy astronomy, telescopes and comets?', false);
    await nothing.json();
    expect(promptRecalled()).toBe(0);
    expect(nothing.headers.get('mgpt-recalled')).toBeNull();
    expect(nothing.headers.get('mgpt-turn')).toBe('stored');
  });

  it('/metrics counts the turns that recalled, their messages and their tokens; a turn that recalled nothing adds none', async () => {
    const fresh = await folded();
    const before = await counters();
    const res = await post(`/v1/entities/${fresh}/messages`, { content: 'Remind me, when did Margaret move to Lisbon?', stream: false });
    const completion = (await res.json()) as EntityCompletion;
    expect(completion.recalled?.length).toBeGreaterThan(0);
    const after = await counters();
    expect(after.turns - before.turns).toBe(1);
    expect(after.messages - before.messages).toBe(completion.recalled!.length);
    expect(after.tokens - before.tokens).toBe(completion.recalled!.reduce((sum, m) => sum + m.tokens, 0));

    await (await post(`/v1/entities/${fresh}/messages`, { content: 'Do you enjoy astronomy, telescopes and comets?', stream: false })).json();
    expect(await counters()).toEqual(after);
  });
});

describe('GET search with mode=any', () => {
  const get = (path: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  it('an entity\'s search takes mode=any (a stem finds the folded fact); another source, or another mode, is a 400', async () => {
    const exact = await get(`/v1/entities/${id}/search?q=teaching&role=user`);
    expect((await exact.json()).data).toEqual([]);
    const any = await get(`/v1/entities/${id}/search?q=teaching&role=user&mode=any`);
    expect(any.status).toBe(200);
    expect((await any.json()).data.map((h: { seq: number }) => h.seq)).toContain(1);
    const logs = await get('/v1/search?q=chemistry&source=logs&mode=any');
    expect(logs.status).toBe(400);
    expect((await logs.json()).error).toBe('mode any searches entity transcripts only, not logs');
    expect((await get('/v1/search?q=chemistry&mode=stems')).status).toBe(400);
  });
});
