import { describe, expect, it } from 'vitest';
import { checkMessages, parseFacadeModel, splitSystem, splitToolRounds } from '../../src/engine/openai/chat-facade.js';
import { parseChatOptions } from '../../src/engine/openai/chat-options.js';
import { KNOWN_SIDE_PATTERNS, align, isSideRequest } from '../../src/engine/openai/chat-policy.js';

const t = (...contents: string[]) => contents.map((content, i) => ({ seq: i + 1, role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content }));
const m = (...contents: string[]) => contents.map((content, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content }));

describe('chat facade rules', () => {
  it('names targets: entity, universe, platform ids and aliases; anything else is a 404', () => {
    expect(parseFacadeModel('entity:web')).toEqual({ kind: 'entity', ref: 'web' });
    expect(parseFacadeModel('universe:abcd')).toEqual({ kind: 'universe', ref: 'abcd' });
    expect(parseFacadeModel('game-1-lite-frozen')).toEqual({ kind: 'platform', id: 'game-1-lite-frozen' });
    expect(() => parseFacadeModel('image-1')).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => parseFacadeModel('entity:')).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => parseFacadeModel(3)).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/model is required/) }));
  });

  it('reads text parts, developer messages and tool rounds; refuses other roles and non-text parts', () => {
    expect(checkMessages([{ role: 'developer', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }])).toEqual([{ role: 'system', content: 'ab' }]);
    const call = { id: 'c1', type: 'function', function: { name: 'roll', arguments: '{"sides":6}' } };
    expect(checkMessages([{ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'c1', content: '4' }])).toEqual([
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', content: '4', toolCallId: 'c1' },
    ]);
    expect(() => checkMessages([{ role: 'tool', content: 'x' }])).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/tool_call_id/) }));
    expect(() => checkMessages([{ role: 'function', content: 'x' }])).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/not supported/) }));
    expect(() => checkMessages([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }])).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/only text/) }));
    expect(() => checkMessages([])).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/non-empty/) }));
  });

  it('applies a client system message to the request (after the instructions); --strict-system refuses it', () => {
    const msgs = [{ role: 'system' as const, content: 'You are a helpful assistant.' }, { role: 'system' as const, content: ' Be kind. ' }, { role: 'user' as const, content: 'x' }];
    expect(splitSystem(msgs, 'Be kind.', 'e', false)).toEqual({ system: 'You are a helpful assistant.', rest: [{ role: 'user', content: 'x' }] });
    expect(splitSystem(msgs.slice(1), 'Be kind.', 'e', true)).toEqual({ rest: [{ role: 'user', content: 'x' }] });
    expect(() => splitSystem(msgs, 'Be kind.', 'e', true)).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/strict-system/) }));
  });

  it('keeps the tool round after the last user message out of the conversation, and earlier rounds out of both', () => {
    const call = (id: string) => ({ role: 'assistant' as const, content: '', toolCalls: [{ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } }] });
    const tool = (id: string) => ({ role: 'tool' as const, content: 'r', toolCallId: id });
    const { conversation, round } = splitToolRounds([...m('a'), call('1'), tool('1'), { role: 'assistant', content: 'ra' }, { role: 'user', content: 'b' }, call('2'), tool('2')]);
    expect(conversation).toEqual([...m('a', 'ra'), { role: 'user', content: 'b' }]);
    expect(round).toEqual([call('2'), tool('2')]);
  });

  it('lines a chat up with the END of the transcript: a second chat, a regenerate, an edit', () => {
    const transcript = t('a', 'ra', 'b', 'rb', 'c', 'rc');
    // The first chat's next message, and a second chat that began at "c".
    expect(align(m('a', 'ra', 'b', 'rb', 'c', 'rc', 'd'), transcript, 6)).toEqual({ kind: 'new', content: 'd' });
    expect(align(m('c', 'rc', 'd'), transcript, 6)).toEqual({ kind: 'new', content: 'd' });
    expect(align(m('fresh'), transcript, 6)).toEqual({ kind: 'new', content: 'fresh' });
    // Replies are not compared (clients regenerate and re-render them); user text is normalised.
    expect(align(m('c\r\n', 'another reply', 'd'), transcript, 6)).toEqual({ kind: 'new', content: 'd' });
    // Regenerate: the conversation is the transcript without its last reply.
    expect(align(m('b', 'rb', 'c'), transcript, 6)).toEqual({ kind: 'regenerate', content: 'c' });
    expect(align(m('c'), transcript, 6)).toEqual({ kind: 'regenerate', content: 'c' });
    // An edit of "b" (and the next message of that edited chat): the first unknown message is where it diverged.
    expect(align(m('a', 'ra', 'B!'), transcript, 6)).toMatchObject({ kind: 'conflict', divergence: 2 });
    expect(align(m('a', 'ra', 'B!', 'rB', 'next'), transcript, 6)).toMatchObject({ kind: 'conflict', divergence: 2 });
    expect(() => align([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }], [], 0)).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/alternate/) }));
  });

  it('knows side requests by their text or by Mgpt-Request: side', () => {
    const title = [{ role: 'user' as const, content: '### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.' }];
    expect(isSideRequest(title, KNOWN_SIDE_PATTERNS)).toBe(true);
    expect(isSideRequest(m('hello'), KNOWN_SIDE_PATTERNS)).toBe(false);
    expect(isSideRequest(m('hello'), KNOWN_SIDE_PATTERNS, 'side')).toBe(true);
    expect(isSideRequest(m('Name this chat'), [/^Name this chat/])).toBe(true);
  });

  it('reads sampling fields and tools; refuses wrong types and n > 1', () => {
    const o = parseChatOptions({ temperature: 0.2, top_p: 0.9, max_completion_tokens: 7, stop: 'END', seed: 3, presence_penalty: 1, frequency_penalty: -1, logprobs: true, user: 'u' });
    expect(o.sampling).toEqual({ temperature: 0.2, topP: 0.9, maxTokens: 7, stop: ['END'], seed: 3, presencePenalty: 1, frequencyPenalty: -1 });
    expect(parseChatOptions({ max_tokens: 5 }).sampling.maxTokens).toBe(5);
    expect(parseChatOptions({ response_format: { type: 'json_object' } }).sampling.extra).toEqual({ response_format: { type: 'json_object' } });
    const tools = [{ type: 'function', function: { name: 'roll', parameters: { type: 'object' } } }];
    expect(parseChatOptions({ tools, tool_choice: { type: 'function', function: { name: 'roll' } } })).toMatchObject({
      tools: [{ type: 'function', name: 'roll', parameters: { type: 'object' } }],
      toolChoice: { type: 'function', name: 'roll' },
    });
    expect(() => parseChatOptions({ temperature: 'hot' })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/temperature must be a number/) }));
    expect(() => parseChatOptions({ max_completion_tokens: 0 })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/at least 1/) }));
    expect(() => parseChatOptions({ n: 2 })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/n must be 1/) }));
    expect(() => parseChatOptions({ tools, tool_choice: { type: 'function', function: { name: 'other' } } })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/not among the tools/) }));
  });
});
