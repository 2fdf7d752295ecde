import { describe, expect, it } from 'vitest';
import { Stream } from 'openai/streaming';
import { CompletionChunker, SSE_DONE, sseFrame } from '../../src/core/wire/completion-stream.js';
import type { EntityCompletion, TurnEvent } from '../../src/core/wire/entity-types.js';

const completion: EntityCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'mgpt-1-27b',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
  entity_id: 'e1',
};

const events: TurnEvent[] = [
  { type: 'start', id: 'chatcmpl-1', model: 'mgpt-1-27b', created: 1700000000, entityId: 'e1', replayed: false },
  { type: 'delta', text: 'Hello' },
  { type: 'delta', text: ' there' },
  { type: 'done', completion, replayed: false },
];

function sseBody(): string {
  const chunker = new CompletionChunker();
  return events.flatMap((e) => chunker.push(e)).map(sseFrame).join('') + SSE_DONE;
}

describe('entity completion stream (seed 4.5)', () => {
  it('emits the exact frames: role first, content, empty stop chunk, usage chunk, [DONE]', () => {
    const base = '"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"mgpt-1-27b"';
    expect(sseBody()).toBe(
      `data: {${base},"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}\n\n` +
        `data: {${base},"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}\n\n` +
        `data: {${base},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n` +
        `data: {${base},"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}\n\n` +
        'data: [DONE]\n\n',
    );
  });

  it("parses with the official openai SDK's stream reader", async () => {
    const response = new Response(sseBody(), { headers: { 'content-type': 'text/event-stream' } });
    const stream = Stream.fromSSEResponse<any>(response, new AbortController());
    let text = '';
    let usage: any;
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello there');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 });
  });
});
