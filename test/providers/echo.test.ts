import { describe, expect, it } from 'vitest';
import { EchoChatModel } from '../../src/providers/echo/echo.js';
import type { ChatRequest, StreamPart } from '../../src/providers/spec.js';

const echo = new EchoChatModel('mgpt-1-27b');
async function run(req: ChatRequest): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of echo.stream(req)) out.push(p);
  return out;
}
const text = (parts: StreamPart[]) => parts.map((p) => (p.type === 'text-delta' ? p.text : '')).join('');

describe('echo provider', () => {
  it('replies with the last user message, streamed word by word', async () => {
    const parts = await run({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'hello  big world' }] });
    expect(parts.filter((p) => p.type === 'text-delta')).toHaveLength(3);
    expect(text(parts)).toBe('hello  big world');
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('calls a tool the input names, then reports the tool results', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather' }, { type: 'function' as const, name: 'roll' }];
    const call = await run({ messages: [{ role: 'user', content: 'please roll a die' }], tools });
    expect(call).toEqual([
      { type: 'tool-call', callId: 'call_echo_1', name: 'roll', arguments: '{"input":"please roll a die"}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(text(await run({ messages: [{ role: 'user', content: 'rolling stones' }], tools }))).toBe('rolling stones');
    expect(text(await run({ messages: [{ role: 'user', content: 'roll' }], tools, toolChoice: 'none' }))).toBe('roll');
    const forced = await run({ messages: [{ role: 'user', content: 'anything' }], tools, toolChoice: { type: 'function', name: 'get_weather' } });
    expect(forced[0]).toMatchObject({ type: 'tool-call', name: 'get_weather' });
    const after = await run({
      messages: [
        { role: 'user', content: 'please roll a die' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'roll', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"value":4}' },
      ],
      tools,
    });
    expect(text(after)).toBe('tool results: {"value":4}');
  });

  it('summarizes extractively within max tokens', async () => {
    const parts = await run({
      purpose: 'summary',
      maxTokens: 10,
      messages: [{ role: 'system', content: 'summarize' }, { role: 'user', content: 'user: one two three four five six seven eight nine\nassistant: ok' }],
    });
    expect(text(parts)).toBe('user: one two three four five');
  });
});
