import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { spawnedServe } from '../helpers/spawned-serve.js';

/** OpenAI's Conversations API on a spawned `mgpt serve`, through the official `openai` package: a conversation is an entity. */
const s = spawnedServe();
const client = () => new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });

async function transcript(entityId: string): Promise<Array<[string, string]>> {
  const r = await s.api('GET', `/v1/entities/${entityId}/messages?limit=500`);
  return r.json.data.map((m: { role: string; content: string }) => [m.role, m.content]);
}

const entityOf = (conv: string) => conv.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

describe('conversations', () => {
  it('create with items and metadata, retrieve, update; a response with conversation appends its turn; items list pages both ways', async () => {
    const c = client();
    const conv = await c.conversations.create({ metadata: { topic: 'demo' }, items: [{ type: 'message', role: 'user', content: 'first' }, { type: 'message', role: 'assistant', content: 'first reply' }] });
    expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'demo' } });
    expect(conv.id).toMatch(/^conv_[0-9a-f]{32}$/);
    const entityId = entityOf(conv.id);
    expect(await transcript(entityId)).toEqual([['user', 'first'], ['assistant', 'first reply']]);
    expect(await c.conversations.retrieve(conv.id)).toEqual(conv);
    expect((await c.conversations.update(conv.id, { metadata: { topic: 'changed' } })).metadata).toEqual({ topic: 'changed' });

    // Both the platform model the entity runs on and entity:<id> name it; the turn goes to the conversation.
    const r1 = await c.responses.create({ model: 'mgpt-1-27b', conversation: conv.id, input: 'second' });
    expect(r1).toMatchObject({ output_text: 'reply: second', conversation: { id: conv.id } });
    await c.responses.create({ model: `entity:${entityId}`, conversation: { id: conv.id }, input: 'third' });
    expect(s.fake.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(['first', 'first reply', 'second', 'reply: second', 'third']);

    const asc = await c.conversations.items.list(conv.id, { order: 'asc', limit: 4 });
    expect(asc.data.map((i) => (i as { content: Array<{ text: string }> }).content[0].text)).toEqual(['first', 'first reply', 'second', 'reply: second']);
    expect(asc.has_more).toBe(true);
    const rest = await c.conversations.items.list(conv.id, { order: 'asc', after: asc.data[3].id });
    expect(rest.data.map((i) => (i as { content: Array<{ text: string }> }).content[0].text)).toEqual(['third', 'reply: third']);
    const desc = await c.conversations.items.list(conv.id, { limit: 2 });
    expect(desc.data.map((i) => (i as { content: Array<{ text: string }> }).content[0].text)).toEqual(['reply: third', 'third']);
    expect(await c.conversations.items.retrieve(asc.data[1].id!, { conversation_id: conv.id })).toEqual(asc.data[1]);
  });

  it('items added without a model call: whole turns join the transcript, a user message is held until a response answers it', async () => {
    const c = client();
    const conv = await c.conversations.create({});
    const entityId = entityOf(conv.id);
    const calls = s.fake.requests.length;
    await c.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'user', content: 'remember 42' }, { type: 'message', role: 'assistant', content: 'noted' }] });
    const held = await c.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'user', content: 'what number?' }] });
    expect(held.data).toEqual([expect.objectContaining({ role: 'user', status: 'in_progress' })]);
    expect(s.fake.requests.length).toBe(calls);
    expect(await transcript(entityId)).toEqual([['user', 'remember 42'], ['assistant', 'noted']]);
    expect((await c.conversations.items.list(conv.id, { order: 'asc' })).data).toHaveLength(3);
    // OpenAI's pattern: the message added as an item, then a response on the conversation with no input.
    const r = await c.responses.create({ model: 'mgpt-1-27b', conversation: conv.id });
    expect(r.output_text).toBe('reply: what number?');
    expect(await transcript(entityId)).toEqual([['user', 'remember 42'], ['assistant', 'noted'], ['user', 'what number?'], ['assistant', 'reply: what number?']]);
  });

  it('a function call on a conversation is answered with function_call_output on the same conversation', async () => {
    const c = client();
    const conv = await c.conversations.create({});
    s.fake.script({ toolCalls: [{ id: 'call_c', name: 'lookup', arguments: '{}' }] }, { text: 'found it' });
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }];
    const call = await c.responses.create({ model: 'mgpt-1-27b', conversation: conv.id, input: 'look it up', tools });
    expect(call.output[0]).toMatchObject({ type: 'function_call', call_id: 'call_c' });
    const done = await c.responses.create({ model: 'mgpt-1-27b', conversation: conv.id, tools, input: [{ type: 'function_call_output', call_id: 'call_c', output: 'ok' }] });
    expect(done.output_text).toBe('found it');
    expect(await transcript(entityOf(conv.id))).toEqual([['user', 'look it up'], ['assistant', 'found it']]);
  });

  it('refuses another model, a deleted item or too many items; deleting a conversation retires its id and keeps the entity', async () => {
    const c = client();
    const conv = await c.conversations.create({ items: [{ type: 'message', role: 'user', content: 'a' }, { type: 'message', role: 'assistant', content: 'b' }] });
    const wrong = await c.responses.create({ model: 'game-1-lite-frozen', conversation: conv.id, input: 'x' }).catch((e) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    expect(wrong.message).toMatch(/not the model conversation .* runs on: send "mgpt-1-27b"/);
    const item = (await c.conversations.items.list(conv.id)).data[0];
    const del = await c.conversations.items.delete(item.id!, { conversation_id: conv.id }).catch((e) => e);
    expect(del).toBeInstanceOf(OpenAI.ConflictError);
    expect(del.message).toMatch(/append-only/);
    const many = Array.from({ length: 21 }, () => ({ type: 'message' as const, role: 'user' as const, content: 'x' }));
    await expect(c.conversations.create({ items: many })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    expect(await c.conversations.delete(conv.id)).toEqual({ id: conv.id, object: 'conversation.deleted', deleted: true });
    await expect(c.conversations.retrieve(conv.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await transcript(entityOf(conv.id))).toEqual([['user', 'a'], ['assistant', 'b']]);
  });
});
