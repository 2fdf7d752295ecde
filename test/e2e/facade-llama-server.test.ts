import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { tempDir } from '../helpers/temp.js';

// The OpenAI facade of `mgpt serve` in front of llama.cpp's real llama-server: an OpenAI client
// on one side, an OpenAI-compatible model on the other, the entity's memory in between.
const parts = llamaServerParts();
const dir = tempDir('mgpt-facade-llama-');

describe.skipIf(!parts)('the OpenAI facade against the real llama-server', () => {
  let llama: LlamaServer;
  let engine: Engine;
  let server: Listening;
  beforeAll(async () => {
    llama = await startLlamaServer(parts!, ['-c', '2048', '-n', '40']);
    engine = openEngineSync({ db: `${dir}/facade.db`, route: () => ({ provider: 'openai', baseUrl: llama.url, model: 'stories', maxRetries: 0 }) });
    server = await listen(engine, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await server?.close();
    engine?.close();
    await llama?.stop();
  });

  it('streams two client turns with resent history; the transcript holds each message once', async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'lily', instructions: 'Tell short stories about Lily.' }, 'local');
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    const history: Array<{ role: 'user' | 'assistant'; content: string }> = [];
    for (const prompt of ['Once upon a time, Lily', 'Then Lily went to the park']) {
      history.push({ role: 'user', content: prompt });
      const stream = await client.chat.completions.create({ model: 'entity:lily', messages: history, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const ch of stream) {
        text += ch.choices[0]?.delta.content ?? '';
        if (ch.usage) usage = ch.usage;
      }
      expect(usage?.completion_tokens).toBeGreaterThan(0);
      history.push({ role: 'assistant', content: text });
    }
    const stored = (await engine.entities.messages(e.id, {}, 'local')).data.map((m) => ({ role: m.role, content: m.content }));
    expect(stored).toEqual(history);
  });

  it('a default system prompt, a title request, a regenerate, sampling fields and a second chat, as a client sends them', async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'tom', instructions: 'Tell short stories about Tom.' }, 'local');
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    const system = { role: 'system' as const, content: 'You are a helpful assistant.' };
    const ask = (messages: OpenAI.ChatCompletionMessageParam[], extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
      client.chat.completions.create({ model: 'entity:tom', messages: [system, ...messages], temperature: 0, max_completion_tokens: 12, seed: 1, ...extra }).withResponse();
    const first = await ask([{ role: 'user', content: 'Tom had a ball' }]);
    const reply1 = first.data.choices[0].message.content!;
    expect(first.data.usage!.completion_tokens).toBeLessThanOrEqual(12);
    // Open WebUI's title request (its template starts with "### Task:"): answered, not stored.
    const title = await ask([{ role: 'user', content: '### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n<chat_history>\nUSER: Tom had a ball\n</chat_history>' }], { stream: false });
    expect(title.response.headers.get('mgpt-turn')).toBe('side');
    const second = await ask([{ role: 'user', content: 'Tom had a ball' }, { role: 'assistant', content: reply1 }, { role: 'user', content: 'Then Tom ran' }]);
    expect(second.response.headers.get('mgpt-turn')).toBe('stored');
    const regen = await ask([{ role: 'user', content: 'Tom had a ball' }, { role: 'assistant', content: reply1 }, { role: 'user', content: 'Then Tom ran' }]).then(() =>
      ask([{ role: 'user', content: 'Tom had a ball' }, { role: 'assistant', content: reply1 }, { role: 'user', content: 'Then Tom ran' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'Tom slept' }]),
    );
    expect(regen.response.headers.get('mgpt-turn')).toBe('stored');
    const again = await ask([{ role: 'user', content: 'Tom slept' }]);
    expect(again.response.headers.get('mgpt-turn')).toBe('regenerated');
    // A second chat on the same entity.
    const other = await ask([{ role: 'user', content: 'Tom woke up' }]);
    await ask([{ role: 'user', content: 'Tom woke up' }, { role: 'assistant', content: other.data.choices[0].message.content! }, { role: 'user', content: 'Tom ate' }]);
    const users = (await engine.entities.messages(e.id, {}, 'local')).data.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).toEqual(['Tom had a ball', 'Then Tom ran', 'Tom slept', 'Tom woke up', 'Tom ate']);
  });

  it('an edit answered statelessly, and a stream stopped after its first words kept as far as it was sent', async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'sue', instructions: 'Tell short stories about Sue.' }, 'local');
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    const first = await client.chat.completions.create({ model: 'entity:sue', messages: [{ role: 'user', content: 'Sue had a cat' }] });
    const reply = first.choices[0].message.content!;
    const edit = await client.chat.completions.create({ model: 'entity:sue', messages: [{ role: 'user', content: 'Sue had a dog' }, { role: 'assistant', content: reply }, { role: 'user', content: 'Then?' }] }).withResponse();
    expect(edit.response.headers.get('mgpt-turn')).toBe('stateless');
    const abort = new AbortController();
    const stream = await client.chat.completions.create({ model: 'entity:sue', stream: true, messages: [{ role: 'user', content: 'Sue had a cat' }, { role: 'assistant', content: reply }, { role: 'user', content: 'Sue ran home' }] }, { signal: abort.signal });
    let shown = '';
    try {
      for await (const ch of stream) {
        shown += ch.choices[0]?.delta.content ?? '';
        if (shown) abort.abort();
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
    let stored: Array<{ role: string; content: string }> = [];
    for (let i = 0; i < 100 && stored.length < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      stored = (await engine.entities.messages(e.id, {}, 'local')).data;
    }
    expect(stored.map((m) => m.role === 'user' ? m.content : 'reply')).toEqual(['Sue had a cat', 'reply', 'Sue ran home', 'reply']);
    expect(stored[3].content.startsWith(shown.trimEnd().slice(0, 1))).toBe(true);
    const next = await client.chat.completions.create({ model: 'entity:sue', messages: [{ role: 'user', content: 'Sue ran home' }, { role: 'assistant', content: shown }, { role: 'user', content: 'Sue slept' }] }).withResponse();
    expect(next.response.headers.get('mgpt-turn')).toBe('stored');
  });

  it('an edited message in a chat longer than the context is answered from its newest messages (issue 37, item 13), saying how many were left out', async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'long', instructions: 'Tell short stories about Lily.' }, 'local');
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    await client.chat.completions.create({ model: 'entity:long', messages: [{ role: 'user', content: 'Once upon a time, Lily' }], max_completion_tokens: 8 });
    // About 4,000 of the model's tokens of history whose first message differs from the transcript: a stateless answer.
    const history: Array<{ role: 'user' | 'assistant'; content: string }> = [{ role: 'user', content: 'Once upon a time, Tom' }];
    for (let i = 0; i < 24; i++) {
      history.push({ role: 'assistant', content: `Lily went to the park and played with her ball and her dog, story ${i}.` });
      history.push({ role: 'user', content: `Then Lily found a big red flower near the tree and smiled, part ${i}.` });
    }
    const r = await client.chat.completions.create({ model: 'entity:long', messages: history, max_completion_tokens: 8 }).withResponse();
    expect(r.response.headers.get('mgpt-turn')).toBe('stateless');
    expect(Number(r.response.headers.get('mgpt-dropped-messages'))).toBeGreaterThan(0);
    expect(r.data.choices[0].message.content).toEqual(expect.any(String));
  });
});
