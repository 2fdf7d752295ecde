import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { spawnedServe } from '../helpers/spawned-serve.js';

/**
 * A long previous_response_id chain on a spawned `mgpt serve` with a small window: the entity
 * rotates and recalls as it would for any client, and the wire events match the fixtures taken
 * from the `openai` package's own types (test/fixtures/responses/README.md).
 */
const s = spawnedServe({ MGPT_WINDOW_BUDGET: '300' });
const client = () => new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

describe('a 30-response chain', () => {
  it('every response is a turn in order, the window rotates, recall reaches the first fact, and a branch from an older response keeps the original', async () => {
    const e = await s.api('POST', '/v1/entities', { model: 'mgpt-1-27b', name: 'chain', recall: 'auto' });
    const id = e.json.id;
    const c = client();
    let prev: string | undefined;
    const ids: string[] = [];
    const first = 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.';
    for (let i = 0; i < 30; i++) {
      const input = i === 0 ? first : `${FILLER[i % FILLER.length]}, day ${i}`;
      const r = await c.responses.create({ model: 'entity:chain', input, ...(prev ? { previous_response_id: prev } : {}) });
      expect(r.previous_response_id).toBe(prev ?? null);
      ids.push(r.id);
      prev = r.id;
    }
    const messages = (await s.api('GET', `/v1/entities/${id}/messages?limit=500`)).json.data;
    expect(messages).toHaveLength(60);
    expect(messages[0].content).toBe(first);
    expect(messages[59].content).toBe(`reply: ${FILLER[29 % FILLER.length]}, day 29`);
    const rotations = (await s.api('GET', `/v1/entities/${id}/rotations`)).json.rotations;
    expect(rotations.length).toBeGreaterThan(0);
    const window = (await s.api('GET', `/v1/entities/${id}/window`)).json;
    expect(window.blocks[0].kind).toBe('summary');

    const asked = await c.responses.create({ model: 'entity:chain', input: 'Which city is my sister Margaret living in?', previous_response_id: prev }).withResponse();
    expect(Number(asked.response.headers.get('mgpt-recalled'))).toBeGreaterThan(0);
    expect(JSON.stringify(s.fake.requests.at(-1)!.body.messages)).toContain('Lisbon');

    // A branch from the fifth response: the first ten messages, then the new turn; the original keeps its 62.
    const branch = await c.responses.create({ model: 'entity:chain', input: 'a different day', previous_response_id: ids[4] }).withResponse();
    const branchId = branch.response.headers.get('x-entity-id')!;
    const b = (await s.api('GET', `/v1/entities/${branchId}/messages?limit=500`)).json.data;
    expect(b.map((m: { content: string }) => m.content)).toEqual([...messages.slice(0, 10).map((m: { content: string }) => m.content), 'a different day', 'reply: a different day']);
    expect((await s.api('GET', `/v1/entities/${id}`)).json.transcript.messages).toBe(62);
  }, 120_000);
});

describe('the streamed events', () => {
  /** Each event's type and the kind of each field, recursively: what the fixtures fix and ids or counts may not change. */
  const shape = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'output_text').map(([k, x]) => [k, shape(x)])) : v === null ? null : typeof v;
  const fixture = (name: string) => shape(JSON.parse(readFileSync(new URL(`../fixtures/responses/${name}.events.json`, import.meta.url), 'utf8')));

  async function events(body: Record<string, unknown>): Promise<unknown[]> {
    const res = await fetch(`${s.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter((f) => f.trim() !== '');
    return frames.map((f) => {
      const [event, data] = f.split('\n');
      const parsed = JSON.parse(data.slice('data: '.length));
      expect(event).toBe(`event: ${parsed.type}`);
      return parsed;
    });
  }

  it('a text reply, a function call, a reply cut at max_output_tokens and a provider that breaks off are each the fixture\'s sequence', async () => {
    await s.api('POST', '/v1/entities', { model: 'mgpt-1-27b', name: 'wire' });
    s.fake.script({ text: ['Hello', ' there'] });
    expect(shape(await events({ model: 'entity:wire', input: 'hi' }))).toEqual(fixture('text'));
    s.fake.script({ toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const tools = [{ type: 'function', name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    expect(shape(await events({ model: 'entity:wire', input: 'weather?', tools }))).toEqual(fixture('function-call'));
    s.fake.script({ text: ['Hello'], finishReason: 'length' });
    const cut = await events({ model: 'entity:wire', input: 'long one', max_output_tokens: 1, store: false });
    expect(shape(cut)).toEqual(fixture('incomplete'));
    s.fake.script({ text: ['Hel', 'lo', 'again'], failAfterChunks: 1 });
    const failed = await events({ model: 'entity:wire', input: 'break', store: false });
    expect(shape(failed)).toEqual(fixture('failed'));
    expect((failed.at(-1) as { response: { status: string } }).response.status).toBe('failed');
  });
});
