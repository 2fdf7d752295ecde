import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The official SDKs as their users call them, through `entity:` models: Vercel `ai` 6
 * (@ai-sdk/openai-compatible 2) and LangChain (@langchain/openai 1.4), with `system` set and
 * with tools. Each chat is two turns, then a second chat on the same entity.
 */
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
let server: Listening;
let apiKey: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  engine = makeEngine(dir, { fake });
  apiKey = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  server = await listen(engine, '127.0.0.1', 0);
});
afterAll(async () => {
  await server.close();
  engine.close();
  await fake.close();
});

const userTurns = async (id: string) =>
  (await engine.entities.messages(id, { limit: 500 }, 'local')).data.filter((m) => m.role === 'user').map((m) => m.content);

describe('Vercel ai SDK (generateText, streamText) on an entity', () => {
  const mgpt = () => createOpenAICompatible({ name: 'mgpt', baseURL: `${server.url}/v1`, apiKey });

  it('keeps each user turn once, with a system prompt, across two chats', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'vercel', instructions: 'You are an entity.' }, 'local');
    const model = mgpt().chatModel('entity:vercel');
    const system = 'You are a helpful assistant.';
    const first = await generateText({ model, system, messages: [{ role: 'user', content: 'one' }], maxRetries: 0 });
    expect(first.text).toBe('reply: one');
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: `You are an entity.\n\n${system}` });
    const stream = streamText({ model, system, messages: [{ role: 'user', content: 'one' }, { role: 'assistant', content: first.text }, { role: 'user', content: 'two' }], maxRetries: 0 });
    expect(await stream.text).toBe('reply: two');
    // A second chat: it starts fresh, and its second message lines up with the end of the transcript.
    const again = await generateText({ model, system, messages: [{ role: 'user', content: 'three' }], maxRetries: 0 });
    await generateText({ model, system, messages: [{ role: 'user', content: 'three' }, { role: 'assistant', content: again.text }, { role: 'user', content: 'four' }], maxRetries: 0 });
    expect(await userTurns(e.id)).toEqual(['one', 'two', 'three', 'four']);
  });

  it('runs a tool round: the model calls, the SDK answers, the entity stores the question and the final reply', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'vercel-tools' }, 'local');
    fake.script({ toolCalls: [{ id: 'call_v', name: 'weather', arguments: '{"city":"Oslo"}' }] }, { text: 'It is cold in Oslo.' });
    const weather = tool({
      description: 'the weather in a city',
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      execute: async ({ city }) => ({ city, celsius: -3 }),
    });
    const r = await generateText({ model: mgpt().chatModel('entity:vercel-tools'), prompt: 'weather in Oslo?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe('It is cold in Oslo.');
    const sent = fake.requests.at(-1)!.body.messages.map((m: { role: string }) => m.role);
    expect(sent.slice(-3)).toEqual(['user', 'assistant', 'tool']);
    const stored = (await engine.entities.messages(e.id, {}, 'local')).data.map((m) => [m.role, m.content]);
    expect(stored).toEqual([['user', 'weather in Oslo?'], ['assistant', 'It is cold in Oslo.']]);
  });
});

describe('LangChain ChatOpenAI (invoke, stream) on an entity', () => {
  const chat = (model: string, extra: Record<string, unknown> = {}) =>
    new ChatOpenAI({ model, apiKey, configuration: { baseURL: `${server.url}/v1` }, maxRetries: 0, ...extra });

  it('keeps each user turn once, with a system message, across two chats', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'lc' }, 'local');
    const m = chat('entity:lc', { temperature: 0.2 });
    const sys = new SystemMessage('Answer in one line.');
    const a = await m.invoke([sys, new HumanMessage('alpha')]);
    expect(a.content).toBe('reply: alpha');
    expect(fake.requests.at(-1)!.body).toMatchObject({ temperature: 0.2 });
    let streamed = '';
    for await (const chunk of await m.stream([sys, new HumanMessage('alpha'), new AIMessage(String(a.content)), new HumanMessage('beta')])) streamed += chunk.content;
    expect(streamed).toBe('reply: beta');
    await m.invoke([sys, new HumanMessage('gamma')]);
    await m.invoke([sys, new HumanMessage('gamma'), new AIMessage('reply: gamma'), new HumanMessage('delta')]);
    expect(await userTurns(e.id)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
  });

  it('binds tools: the tool call comes back in LangChain shape and nothing is stored until the final reply', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'lc-tools' }, 'local');
    fake.script({ toolCalls: [{ id: 'call_l', name: 'add', arguments: '{"a":2,"b":3}' }] });
    const m = chat('entity:lc-tools').bindTools([{ type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } } }]);
    const call = await m.invoke([new HumanMessage('2+3?')]);
    expect(call.tool_calls).toEqual([expect.objectContaining({ name: 'add', args: { a: 2, b: 3 }, id: 'call_l' })]);
    expect(await userTurns(e.id)).toEqual([]);
  });
});
