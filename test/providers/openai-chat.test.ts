import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, ProviderError } from '../../src/core/errors.js';
import { OpenAIChatModel } from '../../src/providers/openai/openai-chat.js';
import type { StreamPart } from '../../src/providers/spec.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

function model(opts: Partial<ConstructorParameters<typeof OpenAIChatModel>[0]> = {}) {
  return new OpenAIChatModel({ baseUrl: fake.url, model: 'gemma3:27b', apiKey: 'sk-test', retryBaseMs: 10, ...opts });
}

async function parts(it: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of it) out.push(p);
  return out;
}

describe('openai provider', () => {
  it('streams text, tool calls and usage, and sends tools and response_format in OpenAI shape', async () => {
    fake.script({
      text: ['Hel', 'lo'],
      toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }],
      usage: { prompt_tokens: 7, completion_tokens: 3 },
    });
    const out = await parts(
      model().stream({
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
        toolChoice: { type: 'function', name: 'lookup' },
        responseFormat: { type: 'json_object' },
        maxTokens: 50,
      }),
    );
    expect(out).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 3 } },
      { type: 'tool-call', callId: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-test');
    expect(req.body).toMatchObject({
      model: 'gemma3:27b',
      stream: true,
      max_tokens: 50,
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
    });
  });

  it('answers a buffered request (nobody watches it arrive) in one piece: stream false, the same parts', async () => {
    fake.script({ text: ['Hel', 'lo'], toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }], usage: { prompt_tokens: 7, completion_tokens: 3 } });
    const out = await parts(model().stream({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 50, buffered: true }));
    expect(out).toEqual([
      { type: 'text-delta', text: 'Hello' },
      { type: 'tool-call', callId: 'call_1', name: 'lookup', arguments: '{}' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 3 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const body = fake.requests.at(-1)!.body;
    expect(body).toMatchObject({ stream: false, max_tokens: 50 });
    expect(body).not.toHaveProperty('stream_options');
    // A context shared by parallel requests that ran out: llama-server's 500, an overflow.
    fake.script({ text: 'x', streamError: { afterChunks: 0, message: 'Context size has been exceeded.' } });
    const err = await parts(model({ maxRetries: 0 }).stream({ messages: [{ role: 'user', content: 'hi' }], buffered: true })).catch((x) => x);
    expect(err).toMatchObject({ name: 'ContextOverflowError', shared: true });
  });

  it('waits longer for a reply asked in one piece: nothing arrives until it is made', async () => {
    const m = model({ timeoutMs: 100, maxRetries: 0 });
    fake.script({ text: 'slow but whole', delayMs: 300 });
    const whole = await parts(m.stream({ messages: [{ role: 'user', content: 'hi' }], buffered: true }));
    expect(whole[0]).toEqual({ type: 'text-delta', text: 'slow but whole' });
    fake.script({ text: 'slow stream', delayMs: 300 });
    await expect(parts(m.stream({ messages: [{ role: 'user', content: 'hi' }] }))).rejects.toMatchObject({ code: 'provider_error', failure: 'timeout', message: expect.stringMatching(/within 100 ms/) });
  });

  it('retries 5xx, 429 and dropped connections before the first byte, then succeeds', async () => {
    const before = fake.requests.length;
    fake.script({ status: 503 }, { status: 429 }, { text: 'ok' });
    const out = await parts(model({ maxRetries: 2 }).stream({ messages: [{ role: 'user', content: 'x' }] }));
    expect(out[0]).toEqual({ type: 'text-delta', text: 'ok' });
    expect(fake.requests.length - before).toBe(3);
    fake.script({ dropConnection: true }, { text: 'again' });
    const out2 = await parts(model({ maxRetries: 1 }).stream({ messages: [{ role: 'user', content: 'x' }] }));
    expect(out2[0]).toEqual({ type: 'text-delta', text: 'again' });
  });

  it('gives up after the retry bound, and never retries 4xx', async () => {
    const before = fake.requests.length;
    fake.script({ status: 500 }, { status: 500 }, { status: 500 });
    await expect(parts(model({ maxRetries: 2 }).stream({ messages: [] }))).rejects.toMatchObject({ code: 'provider_error', failure: 'http_5xx', upstreamStatus: 500 });
    expect(fake.requests.length - before).toBe(3);
    fake.script({ status: 400, body: JSON.stringify({ error: { message: 'bad model' } }) });
    const err = await parts(model({ maxRetries: 2 }).stream({ messages: [] })).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toMatch(/400: bad model/);
    expect(fake.requests.length - before).toBe(4);
  });

  it('does not retry once the stream started: a mid-stream failure is an error', async () => {
    const before = fake.requests.length;
    fake.script({ text: 'one two three four', failAfterChunks: 2 });
    const seen: StreamPart[] = [];
    const err = await (async () => {
      for await (const p of model({ maxRetries: 3 }).stream({ messages: [] })) seen.push(p);
    })().catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(seen.filter((p) => p.type === 'text-delta')).toHaveLength(2);
    expect(fake.requests.length - before).toBe(1);
  });

  it('times out a silent provider and cancels on abort', async () => {
    fake.script({ delayMs: 2000, text: 'late' });
    await expect(parts(model({ timeoutMs: 200, maxRetries: 0 }).stream({ messages: [] }))).rejects.toBeInstanceOf(ProviderError);
    fake.script({ text: 'a b c d e f', chunkDelayMs: 200 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await expect(parts(model().stream({ messages: [], signal: ac.signal }))).rejects.toBeInstanceOf(CancelledError);
  });

  it('times out a provider that goes silent mid-stream', async () => {
    fake.script({ text: 'a b c d', chunkDelayMs: 1000 });
    const err = await parts(model({ timeoutMs: 200, maxRetries: 0 }).stream({ messages: [] })).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toMatch(/no data from the provider for 200 ms/);
  });

  it('reports an unreachable server clearly', async () => {
    const m = new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'x', maxRetries: 1, retryBaseMs: 5 });
    await expect(parts(m.stream({ messages: [] }))).rejects.toMatchObject({ failure: 'connection', message: expect.stringMatching(/cannot reach the model provider at http:\/\/127.0.0.1:9\/v1/) });
  });
});
