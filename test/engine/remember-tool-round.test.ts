import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { collect, done, engineOnFake } from '../helpers/engine.js';
import type { FakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The remember tool next to the client's own tools (issue 33): the client never gets a call to
 * `remember`, and the model is never told "remembered" for a change that is not stored.
 */
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;
engineOnFake(dir, (started) => ({ engine, fake } = started));

const WEATHER = { type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const rememberCall = (id: string, text: string) => ({ id, name: 'remember', arguments: JSON.stringify({ label: 'city', text }) });
const weatherCall = { id: 'w1', name: 'weather', arguments: '{"city":"Porto"}' };

async function toolTurn(id: string) {
  const events = await collect(engine.entities.send(id, { content: 'I moved to Porto; what is the weather?', memoryTool: true, extras: { tools: [WEATHER] } }, 'local'));
  return done(events).completion.choices[0];
}

async function entity(): Promise<string> {
  return (await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are Ada.', recall: 'off' }, 'local')).id;
}

describe('remember and a client tool', () => {
  it('one reply with both: the client gets only its own call; the unanswered remember stores nothing', async () => {
    const id = await entity();
    const from = fake.requests.length;
    fake.script({ toolCalls: [rememberCall('r1', 'Porto'), weatherCall] });
    const choice = await toolTurn(id);
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls!.map((c) => c.function.name)).toEqual(['weather']);
    // The model was never answered for remember: one request, and nothing stored.
    expect(fake.requests.length - from).toBe(1);
    expect((await engine.memory.list(id, 'local')).memory).toEqual([]);
    expect((await engine.entities.messages(id, {}, 'local')).data).toEqual([]);
  });

  it('remember in one round, the client tool in the next: the model was told "remembered", so the block is stored with the tool round', async () => {
    const id = await entity();
    const from = fake.requests.length;
    fake.script({ toolCalls: [rememberCall('r1', 'Porto')] }, { toolCalls: [weatherCall] });
    const choice = await toolTurn(id);
    const told = fake.requests[from + 1].body.messages.at(-1);
    expect(told).toMatchObject({ role: 'tool', tool_call_id: 'r1', content: expect.stringMatching(/^remembered: block "city" is set/) });
    expect(choice.message.tool_calls!.map((c) => c.function.name)).toEqual(['weather']);
    expect((await engine.memory.get(id, 'city', 'local')).text).toBe('Porto');
    expect((await engine.memory.history(id, 'local')).history).toMatchObject([{ label: 'city', before: null, after: 'Porto', source: 'model' }]);
    // The turn itself is not stored: the client answers the tool and the next request stores it.
    expect((await engine.entities.messages(id, {}, 'local')).data).toEqual([]);
  });

  it('at the round limit the engine answers no more calls: remember calls are dropped from what the client gets', async () => {
    const id = await entity();
    fake.script(
      { toolCalls: [rememberCall('r1', 'Lisbon')] },
      { toolCalls: [rememberCall('r2', 'Braga')] },
      { toolCalls: [rememberCall('r3', 'Porto')] },
      { toolCalls: [rememberCall('r4', 'Faro'), weatherCall] },
    );
    const choice = await toolTurn(id);
    expect(choice.message.tool_calls!.map((c) => c.function.name)).toEqual(['weather']);
    // What the model was told (three rounds) is stored; the fourth call, never answered, is not.
    expect((await engine.memory.get(id, 'city', 'local')).text).toBe('Porto');
  });
});
