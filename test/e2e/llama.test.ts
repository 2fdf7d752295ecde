import { contentWords } from '../../src/core/text/recall-query.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import { RemoteBackend } from '../../src/backends/remote/remote-backend.js';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import { CancelledError } from '../../src/core/errors.js';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import type { Engine } from '../../src/engine/engine.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import type { ChatModel, ChatRequest } from '../../src/providers/spec.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { defaultThreads } from '../../src/providers/llama/llama-chat.js';
import { llamaGpu, llamaInstallCommand } from '../../src/providers/llama/llama-install.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { collect } from '../helpers/engine.js';
import { testGguf } from '../helpers/gguf.js';
import { tempDir } from '../helpers/temp.js';

const gguf = testGguf();
const dir = tempDir('mgpt-llama-');

const done = (events: TurnEvent[]) => events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;

describe('thread default', () => {
  it('never uses more threads than cores, and leaves one core to Node', () => {
    expect([1, 2, 3, 4, 16, 64].map((n) => defaultThreads(n))).toEqual([1, 1, 2, 3, 8, 8]);
  });
});

// The model file is not in the repository (it is never committed): without MGPT_TEST_GGUF these
// cannot run, and testGguf() prints a banner saying so. .ci/run sets it.
describe.skipIf(!gguf)('the llama provider on stories260K.gguf (real model)', () => {
  let engine: Engine;
  let lib: typeof import('node-llama-cpp');
  let tokenizer: import('node-llama-cpp').LlamaModel;
  beforeAll(async () => {
    engine = openEngineSync({
      db: `${dir}/llama.db`,
      windowBudget: 120,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0, maxTokens: 40 }),
    });
    lib = await import('node-llama-cpp');
    const llama = await lib.getLlama({ gpu: llamaGpu(), build: 'never', logLevel: lib.LlamaLogLevel.error, maxThreads: 1 });
    tokenizer = await llama.loadModel({ modelPath: gguf! });
  });
  afterAll(() => engine.close());

  it('holds a conversation of several turns with at least two rotations, all by the real model', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Tell short stories about Lily.' }, 'local');
    const said: string[] = [];
    let rotations = 0;
    for (let i = 0; i < 8; i++) {
      const message = `Turn ${i}: tell me what Lily did next in the park with the ${['ball', 'dog', 'kite', 'cat'][i % 4]}.`;
      const events = await collect(engine.entities.send(e.id, { content: message }, 'local'));
      rotations += events.filter((x) => x.type === 'rotation').length;
      const c = done(events).completion;
      const reply = c.choices[0].message.content;
      expect(reply.length).toBeGreaterThan(0);
      expect(events.filter((x) => x.type === 'delta').map((x: any) => x.text).join('')).toBe(reply);
      // Usage comes from the model's own tokenizer: every generated token counts, including the
      // start of a stop sequence that is held back from the text, within the 40-token limit. The
      // tokens a model generates are not always the ones its tokenizer would choose for the same
      // text (it may generate two pieces the tokenizer would merge, or the reverse), so the two
      // counts agree within a token or two, not exactly.
      expect(Math.abs(c.usage.completion_tokens - tokenizer.tokenize(reply).length)).toBeLessThanOrEqual(2);
      expect(c.usage.completion_tokens).toBeLessThanOrEqual(40);
      expect(c.usage.prompt_tokens).toBeGreaterThan(tokenizer.tokenize(message).length);
      said.push(message, reply);
    }
    expect(rotations).toBeGreaterThanOrEqual(2);
    const transcript = (await engine.entities.messages(e.id, { limit: 500 }, 'local')).data;
    expect(transcript.map((m) => m.content)).toEqual(said);
    const w = await engine.entities.window(e.id, 'local');
    expect(checkWindowInvariant(w.blocks, said.length)).toBeNull();
    expect(w.blocks[0].kind).toBe('summary');
    expect(w.blocks[0].content.length).toBeGreaterThan(0);
    expect(w.blocks.slice(0, -1).reduce((t, b) => t + b.tokens, 0)).toBeLessThanOrEqual(120);
  });

  it('gives the same reply to the same prompt twice at temperature 0', async () => {
    const replies: string[] = [];
    for (let i = 0; i < 2; i++) {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Once upon a time.' }, 'local');
      replies.push(done(await collect(engine.entities.send(e.id, { content: 'Tell me about Tom and his red ball.' }, 'local'))).completion.choices[0].message.content);
    }
    expect(replies[0].length).toBeGreaterThan(10);
    expect(replies[1]).toBe(replies[0]);
  });

  it('stops a cancelled generation at once and leaves no trace', async () => {
    const long = openEngineSync({
      db: `${dir}/llama.db`,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0.8, maxTokens: 900 }),
    });
    try {
      const e = await long.entities.create({ model: 'mgpt-1-27b' }, 'local');
      const abort = new AbortController();
      let deltas = 0;
      const turn = (async () => {
        for await (const ev of long.entities.send(e.id, { content: 'Tell me a very long story.', signal: abort.signal }, 'local')) {
          if (ev.type === 'delta' && ++deltas === 3) abort.abort();
        }
      })();
      await expect(turn).rejects.toBeInstanceOf(CancelledError);
      // 900 tokens were allowed; generation stopped a few tokens after the cancel.
      expect(deltas).toBeLessThan(20);
      expect((await long.entities.get(e.id, 'local')).transcript.messages).toBe(0);
      // The model is free again at once: the next turn completes.
      const next = done(await collect(long.entities.send(e.id, { content: 'Hello.' }, 'local')));
      expect(next.completion.choices[0].message.content.length).toBeGreaterThan(0);
      expect((await long.entities.get(e.id, 'local')).transcript.messages).toBe(2);
    } finally {
      long.close();
    }
  });

  it('answers universe turns too, with usage from its tokenizer', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${dir}/prompts`, { recursive: true });
    writeFileSync(`${dir}/prompts/teller.md`, 'You tell stories about Lily.\n');
    const u = openEngineSync({
      db: `${dir}/llama.db`,
      promptsDir: `${dir}/prompts`,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0, maxTokens: 30 }),
    });
    try {
      const userId = (await u.accounts.find('local')).userId;
      const created = await u.universes.create({ storedPrompt: 'teller' }, userId);
      const first = await u.respond({ model: 'game-1-lite-frozen', universe: created.universe, userInput: 'Lily went to the park.' }, { userId });
      expect(first.assistantRaw.length).toBeGreaterThan(0);
      expect(first.usageSettlement.outputTokens).toBeGreaterThanOrEqual(tokenizer.tokenize(first.assistantRaw).length);
      expect(first.usageSettlement.outputTokens).toBeLessThanOrEqual(30);
      const second = await u.respond({ model: 'game-1-lite-frozen', universe: created.universe, userInput: 'Then what?' }, { userId });
      expect(second.diagnostics.prompt.totalMessages).toBe(3);
      expect(second.usageSettlement.inputTokens).toBeGreaterThan(first.usageSettlement.inputTokens);
    } finally {
      u.close();
    }
  });

  it('runs a universe tool round and a structured turn on the real model', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${dir}/prompts`, { recursive: true });
    writeFileSync(
      `${dir}/prompts/moods.md`,
      '---\nresponseFormat:\n  type: json_schema\n  json_schema:\n    name: mood\n    schema:\n      type: object\n' +
        '      properties:\n        mood: { type: string, enum: [happy, sad] }\n        n: { type: integer }\n      required: [mood, n]\n---\n' +
        'You tell stories about Lily.\n',
    );
    const u = openEngineSync({
      db: `${dir}/llama.db`,
      promptsDir: `${dir}/prompts`,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0, maxTokens: 200 }),
    });
    try {
      const userId = (await u.accounts.find('local')).userId;
      const { universe } = await u.universes.create({ storedPrompt: 'moods' }, userId);
      const tools = [
        { type: 'function' as const, name: 'look', description: 'Look at a thing', parameters: { type: 'object', properties: { thing: { type: 'string', enum: ['ball', 'tree'] } } } },
      ];
      const model = 'game-1-lite-frozen';
      const call = await u.respond({ model, universe, userInput: 'Lily sees something.', tools, toolChoice: { type: 'function', name: 'look' } }, { userId });
      expect(call.toolCalls).toHaveLength(1);
      expect(call.toolCalls![0].name).toBe('look');
      expect(['ball', 'tree']).toContain((call.toolCalls![0].arguments as { thing: string }).thing);
      expect(call.diagnostics.provider.finishReason).toBe('tool_calls');
      expect(call.diagnostics.warnings).toBeUndefined();
      const toolResults = [{ callId: call.toolCalls![0].callId, name: 'look', output: { seen: 'a red ball' }, ok: true }];
      const answer = await u.respond({ model, universe, userInput: '', tools, toolResults }, { userId });
      expect(answer.toolCalls).toBeUndefined();
      expect(answer.assistantRaw.length).toBeGreaterThan(0);
      expect(answer.diagnostics.prompt.totalMessages).toBe(3);
      // The stored contract, asked for: the grammar makes even this model's reply valid.
      const structured = await u.respond({ model, universe, userInput: 'How does Lily feel?', useStructuredOutput: true }, { userId });
      expect(structured.diagnostics.structured).toEqual({ valid: true, error: null });
      const v = JSON.parse(structured.assistantRaw) as { mood: string; n: number };
      expect(['happy', 'sad']).toContain(v.mood);
      expect(Number.isInteger(v.n)).toBe(true);
    } finally {
      u.close();
    }
  });

  it('streams a reply through mgpt serve to the remote backend', async () => {
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const server: Listening = await listen(engine, '127.0.0.1', 0);
    try {
      const remote = new RemoteBackend({ baseUrl: server.url, entitiesUrl: `${server.url}/v1`, apiKey: key });
      const e = await remote.createEntity({ model: 'mgpt-1-27b', name: 'far' });
      const events = await collect(remote.sendMessage(e.id, { content: 'Lily found a shiny stone.' }));
      const reply = done(events).completion.choices[0].message.content;
      expect(events.filter((x) => x.type === 'delta').length).toBeGreaterThan(1);
      expect(events.filter((x) => x.type === 'delta').map((x: any) => x.text).join('')).toBe(reply);
      const local = new LocalBackend(engine);
      expect((await local.listMessages(e.id)).data.map((m) => m.content)).toEqual(['Lily found a shiny stone.', reply]);
    } finally {
      await server.close();
    }
  });
});

describe('mgpt models add, route and remove', () => {
  it('adds a llama model, routes ids to it, refuses bad input and removes it in order', async () => {
    const { cliEnv, mgpt } = await import('../helpers/cli.js');
    const env = cliEnv(`${dir}/models`);
    const file = `${dir}/fake.gguf`;
    (await import('node:fs')).writeFileSync(file, 'not really a model');
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', `${dir}/missing.gguf`], env)).code).toBe(4);
    const bad = await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', file, '--threads', '0'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--threads')]);
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'llama'], env)).stderr).toContain('--provider llama needs --gguf PATH');
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'bogus', '--gguf', file], env)).code).toBe(2);
    const added = await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', file, '--threads', '1', '--context', '512', '--temperature', '0', '--route', 'mgpt-1-27b'], env);
    expect([added.code, added.stderr]).toEqual([0, expect.stringContaining('mgpt-1-27b now uses it')]);
    expect((await mgpt(['models', 'route', 'game-1-lite-frozen', 'tiny'], env)).code).toBe(0);
    expect((await mgpt(['models', 'route', 'agent-1-lite-frozen', 'nothing'], env)).code).toBe(4);
    const list = JSON.parse((await mgpt(['models', '--json'], env)).stdout).data as Array<Record<string, unknown>>;
    expect(list.find((m) => m.id === 'mgpt-1-27b')).toMatchObject({ provider: 'llama', uses: 'tiny', model: file, threads: 1, contextSize: 512, temperature: 0 });
    expect(list.find((m) => m.id === 'game-1-lite-frozen')).toMatchObject({ provider: 'llama', uses: 'tiny' });
    expect(list.find((m) => m.id === 'tiny')).toMatchObject({ kind: 'named', provider: 'llama' });
    const still = await mgpt(['models', 'remove', 'tiny'], env);
    expect([still.code, still.stderr]).toEqual([2, expect.stringContaining('mgpt-1-27b, game-1-lite-frozen still route to tiny')]);
    for (const id of ['mgpt-1-27b', 'game-1-lite-frozen', 'tiny']) expect((await mgpt(['models', 'remove', id], env)).code).toBe(0);
    expect(JSON.parse((await mgpt(['models', '--json'], env)).stdout).data.find((m: { id: string }) => m.id === 'mgpt-1-27b').provider).toBe('echo');
  });

  it('without node-llama-cpp installed, a turn fails with the install command and stores nothing', async () => {
    const { cliEnv, mgptBinary: mgpt } = await import('../helpers/cli.js'); // the real binary: its own process
    const { fileURLToPath } = await import('node:url');
    const hide = fileURLToPath(new URL('../helpers/hide-llama.mjs', import.meta.url));
    const env = { ...cliEnv(`${dir}/missing`), NODE_OPTIONS: `--import=${hide}` };
    const file = `${dir}/any.gguf`;
    (await import('node:fs')).writeFileSync(file, 'x');
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', file, '--route', 'mgpt-1-27b'], env)).code).toBe(0);
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    const r = await mgpt(['send', id, 'hello'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: the llama provider needs node-llama-cpp, which is not installed');
    // The command for this machine's own build (here the CI's linux-x64 one; see llama-install.test.ts).
    expect(r.stderr).toContain(`hint: install it next to mgpt: ${llamaInstallCommand()}\n`);
    if (process.platform === 'linux' && process.arch === 'x64') {
      expect(r.stderr).toContain('npm install --no-save --save-prod --ignore-scripts node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1');
    }
    expect(JSON.parse((await mgpt(['entities', 'show', id, '--json'], env)).stdout).transcript.messages).toBe(0);
  });

  it('the install command names the user’s own platform’s build (the real binary on a faked darwin, linux-arm64 and win32)', async () => {
    const { cliEnv, mgptBinary: mgpt } = await import('../helpers/cli.js'); // the real binary: its own process
    const { fileURLToPath } = await import('node:url');
    const { writeFileSync } = await import('node:fs');
    const hide = fileURLToPath(new URL('../helpers/hide-llama.mjs', import.meta.url));
    const env = cliEnv(`${dir}/platforms`);
    writeFileSync(`${dir}/platforms.gguf`, 'x');
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', `${dir}/platforms.gguf`, '--route', 'mgpt-1-27b'], env)).code).toBe(0);
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    for (const [platform, arch, prebuilt] of [
      ['darwin', 'arm64', '@node-llama-cpp/mac-arm64-metal'],
      ['linux', 'arm64', '@node-llama-cpp/linux-arm64'],
      ['win32', 'x64', '@node-llama-cpp/win-x64'],
    ]) {
      const fake = `${dir}/${platform}-${arch}.cjs`;
      writeFileSync(
        fake,
        `Object.defineProperty(process, 'platform', { value: '${platform}' });\nObject.defineProperty(process, 'arch', { value: '${arch}' });\n`,
      );
      const r = await mgpt(['send', id, 'hello'], { ...env, NODE_OPTIONS: `--import=${hide} --require=${fake}` });
      expect([r.code, r.stderr]).toEqual([
        1,
        'error: the llama provider needs node-llama-cpp, which is not installed\n' +
          `hint: install it next to mgpt: npm install --no-save --save-prod --ignore-scripts node-llama-cpp@3.22.1 ${prebuilt}@3.22.1\n`,
      ]);
    }
  });

  // Needs the real model file, like the suite above (see testGguf).
  it.skipIf(!gguf)('the real binary talks to the real model through a routed alias', async () => {
    const { cliEnv, mgptBinary: mgpt } = await import('../helpers/cli.js'); // the real binary: its own process
    const env = cliEnv(`${dir}/cli`);
    expect((await mgpt(['models', 'add', 'tiny', '--provider', 'llama', '--gguf', gguf!, '--threads', '1', '--context', '512', '--temperature', '0', '--max-tokens', '30', '--route', 'mgpt-1-27b'], env)).code).toBe(0);
    const id = (await mgpt(['entities', 'create', '--name', 'story'], env)).stdout.trim();
    const first = await mgpt(['send', id, 'Once upon a time', '--json'], env);
    expect(first.code).toBe(0);
    const c = JSON.parse(first.stdout);
    expect(c.choices[0].message.content.length).toBeGreaterThan(0);
    expect(c.usage.completion_tokens).toBeLessThanOrEqual(30);
    const again = await mgpt(['send', (await mgpt(['entities', 'create'], env)).stdout.trim(), 'Once upon a time', '--json'], env);
    expect(JSON.parse(again.stdout).choices[0].message.content).toBe(c.choices[0].message.content);
  });
});

describe.skipIf(!gguf)('recall on the llama provider (real model, offline)', () => {
  it('a forced recall call finds the folded message, the model answers, and the turn stores two messages', async () => {
    const engine = openEngineSync({
      db: `${dir}/recall.db`,
      windowBudget: 120,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0, maxTokens: 40 }),
    });
    try {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Tell short stories about Lily.', recall: true }, 'local');
      const fact = 'Why did Lily and Tom go to the park with the big red ball one day?';
      await collect(engine.entities.send(e.id, { content: fact }, 'local'));
      for (let i = 0; i < 6; i++) await collect(engine.entities.send(e.id, { content: `Turn ${i}: what next?` }, 'local'));
      const before = await engine.entities.window(e.id, 'local');
      expect(before.blocks.some((b) => b.kind === 'message' && b.covers[0] === 1)).toBe(false);
      const toolChoice = { type: 'function' as const, name: 'recall' };
      const events = await collect(engine.entities.send(e.id, { content: 'Why did Lily go to the park?', extras: { toolChoice } }, 'local'));
      const reply = done(events).completion.choices[0].message;
      expect(reply.content.length).toBeGreaterThan(0);
      expect(reply).not.toHaveProperty('tool_calls');
      expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(16);
      // The model's own query (whatever this tiny model chose) found the folded message; a query of
      // nothing but words that never match alone ("Why?", its choice at temperature 0) finds nothing.
      const log = (await engine.logs.list({})).data.find((l) => l.facade === 'recall')!;
      const searched = (await engine.logs.get(log.id)).request as { rounds: number; recall: Array<{ query: string; seqs: number[] }> };
      expect(searched.rounds).toBe(1);
      const [{ query, seqs }] = searched.recall;
      if (contentWords(query).length) expect(seqs).toContain(1);
      else expect(seqs).toEqual([]);
      expect((await engine.entities.messages(e.id, { after: 0, limit: 1 }, 'local')).data[0].content).toBe(fact);
    } finally {
      await engine.close();
    }
  });
  it('in auto, the folded message is recalled into the prompt the model gets, counted, and the turn fits the model', async () => {
    const engine = openEngineSync({
      db: `${dir}/auto-recall.db`,
      windowBudget: 120,
      route: () => ({ provider: 'llama', gguf: gguf!, threads: 1, contextSize: 1024, temperature: 0, maxTokens: 40 }),
    });
    // What the llama provider is asked: every request of every turn, as the engine built it.
    const requests: ChatRequest[] = [];
    const chatModel = engine.deps.chatModel;
    engine.deps.chatModel = async (...args) => recording(await chatModel(...args), requests);
    try {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Tell short stories about Lily.', recall: 'auto' }, 'local');
      const fact = 'Lily painted the garden fence green with her grandfather.';
      await collect(engine.entities.send(e.id, { content: fact }, 'local'));
      for (let i = 0; i < 6; i++) await collect(engine.entities.send(e.id, { content: `Turn ${i}: what next?` }, 'local'));
      const before = await engine.entities.window(e.id, 'local');
      expect(before.blocks.some((b) => b.kind === 'message' && b.covers[0] === 1)).toBe(false);
      requests.length = 0;
      const question = 'Who was painting the fence?';
      const c = done(await collect(engine.entities.send(e.id, { content: question }, 'local'))).completion;
      expect(c.choices[0].message.content.length).toBeGreaterThan(0);
      // Found by its stem ("painting" for "painted"), though the window no longer shows it.
      expect(c.recalled?.map((m) => m.seq)).toContain(1);
      const prompt = requests.at(-1)!.messages;
      // In the new user message, before the question (one system message only: the template's shape).
      const message = prompt.at(-1) as { role: string; content: string };
      expect(message.role).toBe('user');
      expect(prompt.filter((m) => m.role === 'system').length).toBeLessThanOrEqual(1);
      const block = /^<recalled>\nRecalled from earlier in this conversation:\n([\s\S]*)\n<\/recalled>\n\n([\s\S]*)$/.exec(message.content);
      expect(block?.[2]).toBe(question);
      const recall = { content: `preamble\n${block![1]}` };
      expect(recall.content).toContain(`#1 user (`);
      expect(recall.content).toContain(fact);
      // Counted: the engine's own count of its lines, and the model's count of the whole prompt.
      const tok = await loadTokenEstimator();
      const lines = recall.content.slice(recall.content.indexOf('\n') + 1);
      const counted = c.recalled!.reduce((t, m) => t + m.tokens, 0);
      for (const m of c.recalled!) expect(lines).toContain(`#${m.seq} ${m.role} (`);
      // Each line's count plus one for its line break. A whole line counts as its head plus its
      // message's stored count, so a token merged across the head and the text (or a reply's own
      // breaks) may differ by one more a line.
      expect(Math.abs(counted - tok.count(lines) - c.recalled!.length)).toBeLessThanOrEqual(2 * c.recalled!.length);
      const llama = await (await import('node-llama-cpp')).getLlama({ gpu: llamaGpu(), build: 'never', maxThreads: 1 });
      const tokenizer = await llama.loadModel({ modelPath: gguf! });
      expect(c.usage.prompt_tokens).toBeGreaterThan(tokenizer.tokenize(recall.content).length + tokenizer.tokenize(question).length);
      // Within the model's context, prompt and reply together: no overflow, no retry.
      expect(c.usage.prompt_tokens + c.usage.completion_tokens).toBeLessThanOrEqual(1024);
      expect(requests.filter((r) => String(r.messages.at(-1)?.content).endsWith(question))).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });
});

/** The same model, recording each request it is sent. */
function recording(model: ChatModel, into: ChatRequest[]): ChatModel {
  return new Proxy(model, {
    get(target, key) {
      if (key === 'stream') return (request: ChatRequest) => (into.push(request), target.stream(request));
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
