import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { HALF_CHAR_TOKENS } from '../helpers/fake-openai.js';
import { spawnedServe } from '../helpers/spawned-serve.js';

/**
 * OpenAI's Responses API on a spawned `mgpt serve`, called as the official `openai` package's
 * users call it (responses.create, responses.stream, retrieve, inputItems, delete), the model's
 * side scripted by the fake provider.
 */
const s = spawnedServe();
const client = () => new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });

async function entity(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await s.api('POST', '/v1/entities', { model: 'mgpt-1-27b', name, ...extra });
  expect(r.status).toBe(201);
  return r.json.id;
}

async function transcript(id: string): Promise<Array<[string, string]>> {
  const r = await s.api('GET', `/v1/entities/${id}/messages?limit=500`);
  return r.json.data.map((m: { role: string; content: string }) => [m.role, m.content]);
}

describe('responses.create on an entity', () => {
  it('stores each response as a turn; previous_response_id continues it; retrieve and input_items return what was stored', async () => {
    const id = await entity('notes');
    const c = client();
    const first = await c.responses.create({ model: 'entity:notes', input: 'hello', instructions: 'Be brief.', metadata: { k: 'v' } });
    expect(first).toMatchObject({ object: 'response', status: 'completed', model: 'entity:notes', store: true, instructions: 'Be brief.', metadata: { k: 'v' }, previous_response_id: null });
    expect(first.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(first.output_text).toBe('reply: hello');
    expect(first.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'reply: hello', annotations: [] }] })]);
    expect(first.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), input_tokens_details: { cached_tokens: 0 } });
    expect(s.fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });

    const second = await c.responses.create({ model: 'entity:notes', input: [{ role: 'user', content: [{ type: 'input_text', text: 'again' }] }], previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(await transcript(id)).toEqual([['user', 'hello'], ['assistant', 'reply: hello'], ['user', 'again'], ['assistant', 'reply: again']]);
    // The instructions were this response's only: not stored, not sent again.
    expect(s.fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'user', content: 'hello' });

    expect(await c.responses.retrieve(first.id)).toEqual(first);
    const items = await c.responses.inputItems.list(second.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'again' }] })]);
  });

  it('a previous_response_id older than the latest branches: a new entity from that point, the original untouched', async () => {
    const id = await entity('branchy');
    const c = client();
    const a = await c.responses.create({ model: 'entity:branchy', input: 'one' });
    await c.responses.create({ model: 'entity:branchy', input: 'two', previous_response_id: a.id });
    const raw = await c.responses.create({ model: 'entity:branchy', input: 'other two', previous_response_id: a.id }).withResponse();
    const branchId = raw.response.headers.get('x-entity-id')!;
    expect(raw.response.headers.get('mgpt-turn')).toBe('branched');
    expect(raw.response.headers.get('mgpt-branched-from')).toBe(id);
    expect(branchId).not.toBe(id);
    expect(await transcript(id)).toEqual([['user', 'one'], ['assistant', 'reply: one'], ['user', 'two'], ['assistant', 'reply: two']]);
    expect(await transcript(branchId)).toEqual([['user', 'one'], ['assistant', 'reply: one'], ['user', 'other two'], ['assistant', 'reply: other two']]);
    // The branch's latest response continues the branch, with the chain's first entity as the model.
    await c.responses.create({ model: 'entity:branchy', input: 'three', previous_response_id: raw.data.id });
    expect((await transcript(branchId)).at(-2)).toEqual(['user', 'three']);
    expect(await transcript(id)).toHaveLength(4);
  });

  it('function calls: the model calls, the client answers with function_call_output, the entity stores the question and the final reply', async () => {
    const id = await entity('tools');
    const c = client();
    s.fake.script({ toolCalls: [{ id: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}' }] }, { text: 'It is cold in Oslo.' });
    const tools = [{ type: 'function' as const, name: 'weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const call = await c.responses.create({ model: 'entity:tools', input: 'weather in Oslo?', tools });
    expect(call.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}' })]);
    expect(await transcript(id)).toEqual([]);
    const final = await c.responses.create({
      model: 'entity:tools', previous_response_id: call.id, tools,
      input: [{ type: 'function_call_output', call_id: 'call_w', output: '{"celsius":-3}' }],
    });
    expect(final.output_text).toBe('It is cold in Oslo.');
    const sent = s.fake.requests.at(-1)!.body.messages;
    expect(sent.slice(-3)).toEqual([
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: '{"celsius":-3}', tool_call_id: 'call_w' },
    ]);
    expect(await transcript(id)).toEqual([['user', 'weather in Oslo?'], ['assistant', 'It is cold in Oslo.']]);
    // An output for a call the response did not make is refused, and nothing changes.
    const bad = await c.responses.create({ model: 'entity:tools', previous_response_id: call.id, input: [{ type: 'function_call_output', call_id: 'call_x', output: '1' }] }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(await transcript(id)).toHaveLength(2);
  });

  it('store: false answers in the entity\'s voice and stores nothing; the response cannot be retrieved', async () => {
    const id = await entity('quiet', { instructions: 'You are quiet.' });
    const c = client();
    const r = await c.responses.create({ model: 'entity:quiet', input: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }], store: false });
    expect(r).toMatchObject({ store: false, output_text: 'reply: c' });
    expect(s.fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: 'You are quiet.' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' },
    ]);
    expect(await transcript(id)).toEqual([]);
    await expect(c.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('streams the documented events, read by the SDK\'s own stream helper', async () => {
    await entity('streamer');
    s.fake.script({ text: ['Hel', 'lo'] });
    const stream = client().responses.stream({ model: 'entity:streamer', input: 'hi' });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    stream.on('response.output_text.delta', (e) => (text += e.delta));
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
    }
    const final = await stream.finalResponse();
    expect(text).toBe('Hello');
    expect(final.output_text).toBe('Hello');
    expect(types).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed',
    ]);
    expect(seqs).toEqual(types.map((_, i) => i));
    expect((await client().responses.retrieve(final.id)).output_text).toBe('Hello');
  });

  it('DELETE forgets the response, never the turn: the transcript keeps it', async () => {
    const id = await entity('forget');
    const c = client();
    const r = await c.responses.create({ model: 'entity:forget', input: 'keep me' });
    expect(await c.responses.delete(r.id)).toEqual({ id: r.id, object: 'response', deleted: true });
    await expect(c.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(c.responses.create({ model: 'entity:forget', input: 'x', previous_response_id: r.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await transcript(id)).toEqual([['user', 'keep me'], ['assistant', 'reply: keep me']]);
  });

  it('an Idempotency-Key retry returns the same response and stores nothing twice', async () => {
    const id = await entity('retry');
    const c = client();
    const first = await c.responses.create({ model: 'entity:retry', input: 'once' }, { headers: { 'Idempotency-Key': 'k-1' } });
    const again = await c.responses.create({ model: 'entity:retry', input: 'once' }, { headers: { 'Idempotency-Key': 'k-1' } }).withResponse();
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first);
    expect(await transcript(id)).toEqual([['user', 'once'], ['assistant', 'reply: once']]);
  });

  it('compact folds the entity\'s window now, as a rotation, and the chain goes on from the same response', async () => {
    const id = await entity('compacted');
    const c = client();
    let prev: string | undefined;
    for (const input of ['alpha', 'beta', 'gamma']) prev = (await c.responses.create({ model: 'entity:compacted', input, ...(prev ? { previous_response_id: prev } : {}) })).id;
    const compacted = await c.responses.compact({ model: 'entity:compacted', previous_response_id: prev });
    expect(compacted.object).toBe('response.compaction');
    const item = compacted.output.at(-1) as { type: string; encrypted_content: string };
    expect(item.type).toBe('compaction');
    expect(item.encrypted_content).toMatch(/^summary: /);
    const rotations = (await s.api('GET', `/v1/entities/${id}/rotations`)).json.rotations;
    expect(rotations).toHaveLength(1);
    expect(rotations[0].summary.text).toBe(item.encrypted_content);
    expect((await s.api('GET', `/v1/entities/${id}/window`)).json.blocks[0].kind).toBe('summary');
    const next = await c.responses.create({ model: 'entity:compacted', input: 'delta', previous_response_id: prev }).withResponse();
    expect(next.response.headers.get('mgpt-turn')).toBe('stored');
    expect((await transcript(id)).map(([, t]) => t)).toEqual(['alpha', 'reply: alpha', 'beta', 'reply: beta', 'gamma', 'reply: gamma', 'delta', 'reply: delta']);
    // Compaction folds the entity's own items: input is refused.
    const withInput = await s.api('POST', '/v1/responses/compact', { model: 'entity:compacted', previous_response_id: prev, input: 'x' });
    expect(withInput.status).toBe(400);
  });

  it('refuses what it cannot do in OpenAI\'s error shape, changing nothing', async () => {
    const id = await entity('strict');
    const other = await entity('other');
    const c = client();
    const first = await c.responses.create({ model: 'entity:strict', input: 'one' });
    const wrong = await c.responses.create({ model: 'entity:other', input: 'x', previous_response_id: first.id }).catch((e) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    expect(wrong.message).toMatch(/names entity .* but previous response/);
    const missing = await s.api('POST', '/v1/responses', { model: 'entity:nobody', input: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ type: 'not_found_error' });
    const unknownField = await s.api('POST', '/v1/responses', { model: 'entity:strict', input: 'x', bogus: 1 });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/bogus/) });
    const history = await s.api('POST', '/v1/responses', { model: 'entity:strict', input: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }] });
    expect(history.status).toBe(400);
    expect(await transcript(id)).toHaveLength(2);
    expect(await transcript(other)).toEqual([]);
  });

  it('truncation "disabled" (OpenAI\'s default) answers 400 context_length_exceeded where the input cannot fit; "auto" leaves the oldest out', async () => {
    // A model whose context holds about 300 of its own tokens: 12 messages of 80 characters do not fit.
    s.fake.limit = { nCtx: 300, ...HALF_CHAR_TOKENS };
    try {
      const input = Array.from({ length: 12 }, (_, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `message ${i} `.padEnd(80, 'x') }));
      input.push({ role: 'user', content: 'the question' });
      const c = client();
      const refused = await c.responses.create({ model: 'mgpt-1-27b', input }).catch((e) => e);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused.code).toBe('context_length_exceeded');
      expect(refused.message).toMatch(/does not fit the model's context/);
      const fitted = await c.responses.create({ model: 'mgpt-1-27b', input, truncation: 'auto' });
      expect(fitted).toMatchObject({ status: 'completed', truncation: 'auto', output_text: 'reply: the question' });
      const sent = s.fake.requests.at(-1)!.body.messages as Array<{ content: string }>;
      expect(sent.at(-1)!.content).toBe('the question');
      expect(sent.length).toBeLessThan(input.length);
    } finally {
      s.fake.limit = undefined;
    }
  });
});
