import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { collect } from '../helpers/engine.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { type Timed, recordingProxy } from '../helpers/recording-proxy.js';
import { tempDir } from '../helpers/temp.js';

// Every request mgpt builds, against llama.cpp's real llama-server rendering the published chat
// templates of four model families (test/fixtures/chat-templates/README.md says where each is
// from): Gemma's and Mistral's refuse anything but one leading system message and alternating
// user and assistant messages, with a 400 "Conversation roles must alternate".
const parts = llamaServerParts();
const dir = tempDir('mgpt-templates-');
const FIXTURES = join(__dirname, '..', 'fixtures', 'chat-templates');
const TEMPLATES = ['google-gemma-3-it.jinja', 'mistralai-Mistral-Nemo-Instruct-2407.jinja', 'meta-llama-Llama-3.2-3B-Instruct.jinja', 'Qwen-QwQ-32B.jinja'];

const WORDS = 'Lily Tom the big red ball park river sun dog cat tree house mom dad played ran jumped happy friend little boat'.split(' ');
/** A deterministic message of 8-20 words: the words recur, so auto recall finds earlier lines. */
function message(i: number): string {
  let s = i * 7919 + 17;
  const next = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  return Array.from({ length: 8 + Math.floor(next() * 13) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

describe.skipIf(!parts).each(TEMPLATES)('the chat template %s on the real llama-server', (template) => {
  let llama: LlamaServer;
  let proxy: { origin: string; close(): void };
  let engine: Engine;
  let server: Listening;
  const seen: Timed[] = [];
  const failed = () => seen.filter((r) => r.status !== 200).map((r) => `${r.status}: ${r.error?.slice(0, 200)} ${JSON.stringify(r.messages.map((m) => m.role))}`);

  beforeAll(async () => {
    llama = await startLlamaServer(parts!, ['--jinja', '--chat-template-file', join(FIXTURES, template), '-c', '4096', '--override-kv', 'llama.context_length=int:4096', '-np', '1', '--temp', '0', '-n', '16']);
    proxy = await recordingProxy(llama.origin, seen);
    const prompts = join(dir, `prompts-${template}`);
    mkdirSync(prompts, { recursive: true });
    writeFileSync(join(prompts, 'narrator.md'), 'You narrate a small story about Lily and Tom.\n');
    engine = openEngineSync({
      db: join(dir, `${template}.db`),
      promptsDir: prompts,
      windowBudget: 200,
      route: () => ({ provider: 'openai', baseUrl: `${proxy.origin}/v1`, model: 'stories', maxRetries: 0, maxTokens: 16 }),
    });
    server = await listen(engine, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await server?.close();
    engine?.close();
    proxy?.close();
    await llama?.stop();
  });

  it('100 entity turns with rotations, auto recall, a pinned block and the memory tool: no request is refused', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'lily', instructions: 'Tell gentle stories about Lily and Tom.', recall: 'auto' }, 'local');
    await engine.memory.set(e.id, 'user', 'The reader is five and likes boats.', 'local');
    let rotations = 0;
    let recalled = 0;
    for (let i = 0; i < 100; i++) {
      const events = await collect(engine.entities.send(e.id, { content: message(i), ...(i % 10 === 3 ? { memoryTool: true } : {}) }, 'local'));
      rotations += events.filter((x) => x.type === 'rotation').length;
      const done = events.find((x) => x.type === 'done');
      if (done?.type === 'done') recalled += done.completion.recalled?.length ?? 0;
    }
    expect(failed()).toEqual([]);
    expect(rotations).toBeGreaterThanOrEqual(5);
    expect(recalled).toBeGreaterThan(0);
    // Recalled lines went in front of the model, inside the user messages.
    expect(seen.some((r) => r.messages.some((m) => m.role === 'user' && String(m.content).includes('<recalled>')))).toBe(true);
    // A summary request went to the server too, in the same shape.
    expect(seen.some((r) => r.summary)).toBe(true);
  }, 300_000);

  it("a client's tool round (where the template has tools) and a stateless answer through the facade, messages merged where the client sent two of a role", async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const from = seen.length;
    // Tool call ids of 9 letters and digits: Mistral's template refuses any other. Gemma 3's template
    // has no tools (its own role check refuses a `tool` message), so no client can send it a round.
    if (!template.includes('gemma')) await client.chat.completions.create({
      model: 'entity:lily', tools, max_completion_tokens: 8,
      messages: [
        { role: 'user', content: 'Is it sunny by the river?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call12345', type: 'function', function: { name: 'weather', arguments: '{"city":"river"}' } }] },
        { role: 'tool', tool_call_id: 'call12345', content: 'sunny' },
      ],
    });
    await client.chat.completions.create({
      model: 'mgpt-1-27b', max_completion_tokens: 8,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'system', content: 'Be kind.' }, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'Lily ran.' }, { role: 'user', content: 'Tom jumped.' }],
    });
    expect(seen.length).toBeGreaterThan(from);
    expect(failed()).toEqual([]);
  });

  it('a universe past 64 blocks, and an import with --summarize', async () => {
    const { universe } = await engine.universes.create({ storedPrompt: 'narrator' });
    // Short inputs: the 64/16 window is not fitted to a context, and the tiny model's tokens are short.
    for (let i = 0; i < 40; i++) await engine.respond({ model: 'game-1-lite-frozen', universe, userInput: `Lily ${i}` } as never);
    const chat_messages = Array.from({ length: 40 }, (_, i) => ({
      // Two user messages in a row, as exports hold after an edit: the summary request merges them.
      uuid: `m${i}`, sender: i % 2 || i === 6 ? 'assistant' : 'human', text: `${i}: ${message(2000 + i)}`, created_at: new Date(Date.UTC(2024, 0, 1, i)).toISOString(),
    }));
    chat_messages[5].sender = 'human';
    const file = join(dir, `import-${template}.json`);
    writeFileSync(file, JSON.stringify([{ uuid: 'c1', name: 'stories', created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-02T00:00:00Z', chat_messages }]));
    const backend = new LocalBackend(engine);
    const res = await backend.importChats(file, { summarize: true });
    expect((await backend.getWindow(res.entities[0].id)).blocks[0].kind).toBe('summary');
    expect(failed()).toEqual([]);
  }, 300_000);
});
