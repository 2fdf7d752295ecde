import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { engineOnFake } from '../helpers/engine.js';
import type { FakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-toolchoice-');
let fake: FakeOpenAI;
let engine: Engine;
engineOnFake(dir, (started) => ({ engine, fake } = started));

const tools = [{ type: 'function', name: 'roll', parameters: { type: 'object' } }, { type: 'function', name: 'look' }];
const ask = (body: Record<string, unknown>) => engine.respond({ model: 'game-1-lite-frozen', userInput: 'go', tools, ...body } as never);

describe('toolChoice in every shape', () => {
  it('goes to the provider in the OpenAI wire shape', async () => {
    const cases: Array<[unknown, unknown]> = [
      ['auto', 'auto'],
      ['none', 'none'],
      ['required', 'required'],
      [{ type: 'function', name: 'roll' }, { type: 'function', function: { name: 'roll' } }],
      [{ type: 'function', function: { name: 'look' } }, { type: 'function', function: { name: 'look' } }],
    ];
    for (const [given, sent] of cases) {
      fake.script({ toolCalls: [{ id: 'c1', name: 'roll', arguments: '{}' }] });
      await ask({ toolChoice: given });
      expect(fake.requests.at(-1)!.body.tool_choice).toEqual(sent);
    }
  });

  it('refuses a name that is not among the tools, and required without tools, before any call', async () => {
    const calls = fake.requests.length;
    for (const toolChoice of [{ type: 'function', name: 'fly' }, { type: 'function', function: { name: 'fly' } }]) {
      const err = await ask({ toolChoice }).catch((x) => x);
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err.errors).toEqual([{ field: 'toolChoice', message: 'names "fly", which is not among the tools' }]);
    }
    const noTools = await engine.respond({ model: 'game-1-lite-frozen', userInput: 'go', toolChoice: 'required' }).catch((x) => x);
    expect(noTools.errors).toEqual([{ field: 'toolChoice', message: '"required" needs tools' }]);
    const bad = await ask({ toolChoice: { type: 'function' } }).catch((x) => x);
    expect(bad.errors[0].field).toBe('toolChoice');
    expect(fake.requests.length).toBe(calls);
  });

  it('reports a provider that answers with text when a tool was required', async () => {
    fake.script({ text: 'I would rather talk.' });
    const res = await ask({ toolChoice: 'required' });
    expect(res.toolCalls).toBeUndefined();
    expect(res.diagnostics.warnings).toEqual(['toolChoice required a tool, but the provider answered with text']);
    fake.script({ text: 'still talking' });
    const named = await ask({ toolChoice: { type: 'function', name: 'look' } });
    expect(named.diagnostics.warnings).toEqual(['toolChoice required the tool look, but the provider answered with text']);
    fake.script({ toolCalls: [{ id: 'c9', name: 'look', arguments: '{}' }] });
    const called = await ask({ toolChoice: 'required' });
    expect(called.diagnostics.provider.finishReason).toBe('tool_calls');
    expect(called.diagnostics.warnings).toBeUndefined();
  });
});
