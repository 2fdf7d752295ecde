import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, ForbiddenError, NotFoundError, ProviderError } from '../../src/core/errors.js';
import type { GenerationResponse } from '../../src/core/wire/universe-types.js';
import type { Engine } from '../../src/engine/engine.js';
import { makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const prompts = join(dir, 'prompts');
const SECRET = 'You are the narrator of Glimmerdeep. SECRET-PROMPT-MARKER-42.';
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(prompts, { recursive: true });
  writeFileSync(join(prompts, 'narrator.md'), SECRET + '\n');
  writeFileSync(
    join(prompts, 'quest.md'),
    `---\nresponseFormat:\n  type: json_schema\n  json_schema:\n    name: patch\n    schema: { type: object }\nadditionalInstructions: Always answer in JSON.\n---\nYou run quests.\n`,
  );
});
afterAll(() => fake.close());

const engine = () => makeEngine(dir, { fake, promptsDir: prompts });
async function universe(e: Engine, prompt = 'narrator') {
  return (await e.universes.create({ storedPrompt: prompt })).universe;
}
const ask = (e: Engine, body: Record<string, unknown>) => e.respond({ model: 'game-1-lite-frozen', ...body } as never);
const runtime = async (e: Engine, id: string) => (await e.universes.doc(id)).runtime.conversation;
const errorsOf = async (p: Promise<unknown>) => {
  const err = await p.catch((x) => x);
  expect(err).toBeInstanceOf(BadRequestError);
  return (err as BadRequestError).errors;
};

describe('universes', () => {
  it('creates from a stored prompt with a frozen snapshot; the document never holds the prompt text', async () => {
    const e = engine();
    const created = await e.universes.create({ storedPrompt: 'narrator', displayName: 'Tuesday' });
    expect(created).toEqual({ universe: expect.stringMatching(/^[0-9a-f-]{36}$/), userId: expect.any(String), prompt: { storedPrompt: 'narrator', stored: true } });
    const doc = await e.universes.doc(created.universe);
    expect(doc).toMatchObject({ id: created.universe, displayName: 'Tuesday', prompt: { storedPrompt: 'narrator' }, conversation: [], runtime: { conversation: [] } });
    expect(JSON.stringify(doc)).not.toContain('SECRET-PROMPT-MARKER');
    await expect(e.universes.create({ storedPrompt: 'nope' })).rejects.toThrow(NotFoundError);
    await expect(e.universes.create({ storedPrompt: '../etc/passwd' })).rejects.toThrow(BadRequestError);
    await expect(() => e.universes.doc('not-a-uuid')).rejects.toThrow(BadRequestError);
    await expect(() => e.universes.doc('00000000-0000-4000-8000-00000000abcd')).rejects.toMatchObject({ code: 'not_found', message: 'Universe not found' });
    await expect(() => e.universes.doc(created.universe, '11111111-1111-4111-8111-111111111111')).rejects.toThrow(ForbiddenError);
    e.close();
  });

  it('keeps the snapshot when the prompt file is edited or deleted; fingerprints follow the built prompt', async () => {
    const e = engine();
    writeFileSync(join(prompts, 'temp.md'), 'Original prompt.\n');
    const id = await universe(e, 'temp');
    const r1 = await ask(e, { universe: id, userInput: 'hello' });
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Original prompt.' });
    writeFileSync(join(prompts, 'temp.md'), 'Edited prompt.\n');
    await ask(e, { universe: id, userInput: 'again' });
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Original prompt.' });
    rmSync(join(prompts, 'temp.md'));
    await ask(e, { universe: id, userInput: 'still here' });
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Original prompt.' });
    // The same built prompt gives the same fingerprint: a second universe at the same point.
    writeFileSync(join(prompts, 'temp.md'), 'Original prompt.\n');
    const twin = await universe(e, 'temp');
    const r2 = await ask(e, { universe: twin, userInput: 'hello' });
    expect(r2.promptFingerprint).toBe(r1.promptFingerprint);
    expect(r1.promptFingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    e.close();
  });
});

describe('responses: window, prompt cache and fingerprint', () => {
  it('sends an identical prefix while the window start stays, and moves it in steps of 16', async () => {
    const e = engine();
    const id = await universe(e);
    const starts: number[] = [];
    const fingerprints: string[] = [];
    let prev: any[] | null = null;
    let prevStart = -1;
    for (let turn = 0; turn < 45; turn++) {
      const r = await ask(e, { universe: id, userInput: `turn ${turn}` });
      const sent = fake.requests.at(-1)!.body.messages;
      const p = r.diagnostics.prompt;
      expect(p.totalMessages).toBe(turn * 2 + 1);
      expect(p.windowStart + p.windowMessages).toBe(p.totalMessages);
      expect(sent).toHaveLength(p.windowMessages + 1);
      if (prev && p.windowStart === prevStart) {
        // The provider's prompt cache stays warm: the old prompt is a prefix of the new one.
        expect(sent.slice(0, prev.length)).toEqual(prev);
      } else if (prev) {
        expect(p.windowStart - prevStart).toBe(16);
        expect(sent.slice(0, prev.length)).not.toEqual(prev);
      }
      if (p.totalMessages > 64) expect(p.windowMessages).toBeGreaterThanOrEqual(48);
      expect(p.windowMessages).toBeLessThanOrEqual(64);
      starts.push(p.windowStart);
      fingerprints.push(r.promptFingerprint);
      prev = sent;
      prevStart = p.windowStart;
    }
    expect(new Set(starts)).toEqual(new Set([0, 16, 32]));
    expect(new Set(fingerprints).size).toBe(45);
    e.close();
  });
});

describe('responses: tool continuation', () => {
  const tools = [
    { type: 'function', name: 'roll', parameters: { type: 'object' } },
    { type: 'function', name: 'look', parameters: { type: 'object' } },
  ];

  it('stores each cumulative result once and the final answer once', async () => {
    const e = engine();
    const id = await universe(e);
    fake.script({ text: 'Let me check.', toolCalls: [{ id: 'c1', name: 'roll', arguments: '{"sides":6}' }, { id: 'c2', name: 'look', arguments: '{}' }] });
    const first = await ask(e, { universe: id, userInput: 'roll and look', tools, toolChoice: 'auto' });
    expect(first.toolCalls).toEqual([
      { callId: 'c1', name: 'roll', arguments: { sides: 6 } },
      { callId: 'c2', name: 'look', arguments: {} },
    ]);
    expect(fake.requests.at(-1)!.body.tools).toHaveLength(2);
    expect(fake.requests.at(-1)!.body.tool_choice).toBe('auto');
    // Stored before the response returned.
    expect((await runtime(e, id)).map((m) => m.role)).toEqual(['user', 'assistant']);

    // New input while the turn waits: 400.
    expect(await errorsOf(ask(e, { universe: id, userInput: 'something else' }))).toEqual([{ field: 'toolResults', message: expect.stringMatching(/c1, c2/) }]);
    // Unknown callId, or a result without ok/output: 400 with errors, nothing stored.
    expect(await errorsOf(ask(e, { universe: id, userInput: 'x', toolResults: [{ callId: 'zz', name: 'roll', output: {}, ok: true }] }))).toEqual([
      { field: 'toolResults[0].callId', message: 'zz is not pending' },
    ]);
    expect(await errorsOf(ask(e, { universe: id, userInput: 'x', toolResults: [{ callId: 'c1', name: 'roll' }] }))).toEqual([
      { field: 'toolResults[0].output', message: expect.any(String) },
      { field: 'toolResults[0].ok', message: expect.any(String) },
    ]);
    expect(await runtime(e, id)).toHaveLength(2);

    const r1 = { callId: 'c1', name: 'roll', output: { value: 5 }, ok: true };
    const r2 = { callId: 'c2', name: 'look', output: { error: 'too dark' }, ok: false };
    const calls = fake.requests.length;
    const partial = await ask(e, { universe: id, userInput: 'roll and look', tools, toolResults: [r1] });
    expect(fake.requests.length).toBe(calls); // cannot continue until c2 is answered
    expect(partial.toolCalls?.map((c) => c.callId)).toEqual(['c2']);
    fake.script({ text: 'You rolled a 5, but it is too dark to see.' });
    const done = await ask(e, { universe: id, userInput: 'roll and look', tools, toolResults: [r1, r2] });
    expect(done.assistantRaw).toBe('You rolled a 5, but it is too dark to see.');
    expect(done.toolCalls).toBeUndefined();
    const sent = fake.requests.at(-1)!.body.messages;
    expect(sent.slice(-3)).toEqual([
      { role: 'assistant', content: 'Let me check.', tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'roll', arguments: '{"sides":6}' } },
        { id: 'c2', type: 'function', function: { name: 'look', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'c1', name: 'roll', content: '{"value":5}' },
      { role: 'tool', tool_call_id: 'c2', name: 'look', content: '{"ok":false,"error":{"error":"too dark"}}' },
    ]);
    const again = await ask(e, { universe: id, userInput: 'roll and look', tools, toolResults: [r1, r2] });
    expect(fake.requests.length).toBe(calls + 1);
    expect(again.assistantRaw).toBe(done.assistantRaw);
    const conv = await runtime(e, id);
    expect(conv.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(conv.filter((m) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(['c1', 'c2']);
    expect((await e.universes.doc(id)).conversation.map((t) => [t.role, t.content])).toEqual([
      ['user', 'roll and look'],
      ['assistant', 'You rolled a 5, but it is too dark to see.'],
    ]);
    e.close();
  });

  it('follows a provider that asks for more tools after results, with cumulative results', async () => {
    const e = engine();
    const id = await universe(e);
    fake.script(
      { toolCalls: [{ id: 'a1', name: 'roll', arguments: '{}' }] },
      { toolCalls: [{ id: 'a2', name: 'look', arguments: '{}' }] },
      { text: 'All done.' },
    );
    const r = await ask(e, { universe: id, userInput: 'go', tools });
    expect(r.toolCalls?.[0].callId).toBe('a1');
    const res1 = { callId: 'a1', name: 'roll', output: { v: 1 }, ok: true };
    const more = await ask(e, { universe: id, userInput: 'go', tools, toolResults: [res1] });
    expect(more.toolCalls?.[0].callId).toBe('a2');
    const res2 = { callId: 'a2', name: 'look', output: { v: 2 }, ok: true };
    const final = await ask(e, { universe: id, userInput: 'go', tools, toolResults: [res1, res2] });
    expect(final.assistantRaw).toBe('All done.');
    expect((await runtime(e, id)).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    e.close();
  });
});

describe('responses: requestId', () => {
  it('a retry after a 5xx stores nothing twice; a retry after success returns the identical response, marked replayed', async () => {
    const e = engine();
    const id = await universe(e);
    fake.script({ status: 503 });
    await expect(ask(e, { universe: id, userInput: 'fragile', requestId: 'req-1' })).rejects.toBeInstanceOf(ProviderError);
    expect(await runtime(e, id)).toEqual([{ role: 'user', content: 'fragile' }]); // stored at once, per the seed
    const ok = await ask(e, { universe: id, userInput: 'fragile', requestId: 'req-1' });
    expect((await runtime(e, id)).map((m) => m.role)).toEqual(['user', 'assistant']);
    const calls = fake.requests.length;
    const replay = await ask(e, { universe: id, userInput: 'fragile', requestId: 'req-1' });
    expect(fake.requests.length).toBe(calls);
    expect(replay).toEqual({ ...ok, diagnostics: { ...ok.diagnostics, replayed: true } });
    expect(ok.diagnostics.replayed).toBeUndefined();
    expect(ok.diagnostics.requestId).toBe('req-1');
    expect(await runtime(e, id)).toHaveLength(2);
    e.close();
  });
});

describe('responses: validation, modes and options', () => {
  it('rejects bad bodies with one error per field', async () => {
    const e = engine();
    const id = await universe(e);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ userInput: 'x' }, 'model'],
      [{ model: 'gpt-4o', userInput: 'x' }, 'model'],
      [{ model: 'game-1-lite-frozen' }, 'userInput'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', modelOverride: 'foo/bar' }, 'modelOverride'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', universe: id, universeDoc: { conversation: [], runtime: { conversation: [] } } }, 'universe'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', userId: 'me' }, 'userId'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', usageForward: {} }, 'usageForward'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', universe: id, statePointer: -1 }, 'statePointer'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', universe: id, statePointer: 1.5 }, 'statePointer'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', surprise: 1 }, 'surprise'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', toolChoice: 'sometimes' }, 'toolChoice'],
      [{ model: 'game-1-lite-frozen', userInput: 'x', universeDoc: { conversation: [] } }, 'universeDoc.runtime.conversation'],
    ];
    for (const [body, field] of cases) {
      const errors = await errorsOf(e.respond(body as never));
      expect(errors?.map((x) => x.field), JSON.stringify(body)).toContain(field);
    }
    await expect(e.respond('nope' as never)).rejects.toThrow(BadRequestError);
    await expect(ask(e, { universe: 'bad-id', userInput: 'x' })).rejects.toThrow(BadRequestError);
    await expect(ask(e, { universe: '00000000-0000-4000-8000-00000000abcd', userInput: 'x' })).rejects.toMatchObject({ code: 'not_found', message: 'Universe not found' });
    e.close();
  });

  it('validates and applies statePointer, never inside a tool group', async () => {
    const e = engine();
    const id = await universe(e);
    await ask(e, { universe: id, userInput: 'one' });
    fake.script({ toolCalls: [{ id: 't1', name: 'roll', arguments: '{}' }] }, { text: 'rolled' });
    await ask(e, { universe: id, userInput: 'two', tools: [{ type: 'function', name: 'roll' }] });
    await ask(e, { universe: id, userInput: 'two', toolResults: [{ callId: 't1', name: 'roll', output: {}, ok: true }] });
    expect(await runtime(e, id)).toHaveLength(6); // user, assistant, user, assistant(tool), tool, assistant
    for (const p of [4, 7]) {
      expect((await errorsOf(ask(e, { universe: id, userInput: 'x', statePointer: p })))?.[0].field).toBe('statePointer');
    }
    expect(await runtime(e, id)).toHaveLength(6);
    await ask(e, { universe: id, userInput: 'branch', statePointer: 2 });
    expect((await runtime(e, id)).map((m) => m.content)).toEqual(['one', 'reply: one', 'branch', 'reply: branch']);
    expect(fake.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'reply: one' },
      { role: 'user', content: 'branch' },
    ]);
    e.close();
  });

  it('structured output, additional instructions, inline responseFormat and modelOverride', async () => {
    const e = makeEngine(dir, {
      fake,
      promptsDir: prompts,
      route: (id) => ({ provider: 'openai', baseUrl: fake.url, model: `routed-${id}`, maxRetries: 0 }),
    });
    const id = await universe(e, 'quest');
    await ask(e, { universe: id, userInput: 'start', useStructuredOutput: true, useAdditionalInstructions: true });
    let body = fake.requests.at(-1)!.body;
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You run quests.\n\nAlways answer in JSON.' });
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'patch', schema: { type: 'object' } } });
    expect(body.model).toBe('routed-game-1-lite-frozen');
    const r = await ask(e, { universe: id, userInput: 'next', responseFormat: { type: 'json_object' } });
    body = fake.requests.at(-1)!.body;
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You run quests.' });
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(r.diagnostics.prompt.structuredOutput).toBe(true);
    expect(r.diagnostics.provider).toMatchObject({ name: 'openai', model: 'routed-game-1-lite-frozen', responseFormat: 'json_object' });
    await e.respond({ model: 'general-frozen-overridable', modelOverride: 'vendor/model-x', userInput: 'hi' });
    expect(fake.requests.at(-1)!.body.model).toBe('vendor/model-x');
    const plain = await universe(e);
    expect((await errorsOf(ask(e, { universe: plain, userInput: 'x', useStructuredOutput: true })))?.[0].field).toBe('useStructuredOutput');
    e.close();
  });

  it('inline and standalone modes store nothing; the response has the full shape', async () => {
    const e = engine();
    const id = await universe(e);
    await ask(e, { universe: id, userInput: 'stored turn' });
    const doc = await e.universes.doc(id);
    const inline = await ask(e, { universeDoc: doc, userInput: 'inline turn' });
    expect(fake.requests.at(-1)!.body.messages).toEqual([
      { role: 'system', content: SECRET },
      { role: 'user', content: 'stored turn' },
      { role: 'assistant', content: 'reply: stored turn' },
      { role: 'user', content: 'inline turn' },
    ]);
    expect(await runtime(e, id)).toHaveLength(2);
    const withText = await ask(e, { universeDoc: { prompt: { text: 'Inline prompt.' }, conversation: [], runtime: { conversation: [] } }, userInput: 'hi' });
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Inline prompt.' });
    const standalone = await ask(e, { userInput: 'just once' });
    expect(fake.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'just once' }]);
    for (const r of [inline, withText, standalone] as GenerationResponse[]) {
      expect(Object.keys(r).sort()).toEqual(
        ['assistantRaw', 'diagnostics', 'nextUniverseTime', 'previewText', 'promptFingerprint', 'requestLog', 'timingBreakdown', 'usageSettlement'].sort(),
      );
      expect(Object.keys(r.diagnostics.serverStages)).toEqual(['auth', 'load', 'truncate', 'promptBuild', 'provider']);
      expect(r.nextUniverseTime).toMatch(/Z$/);
    }
    expect(standalone.diagnostics.summary.mode).toBe('standalone');
    expect(inline.diagnostics.storage.source).toBe('none');
    const s1 = await ask(e, { universe: id, userInput: 'a' });
    expect(s1.diagnostics.storage.source).toBe('cache');
    const other = makeEngine(dir, { fake, promptsDir: prompts, db: sqliteOf(e).db.name });
    const fromDb = await other.respond({ model: 'game-1-lite-frozen', universe: id, userInput: 'b' });
    expect(fromDb.diagnostics.storage.source).toBe('database');
    // Written by another connection: the first engine's cache must not serve the old conversation.
    const s2 = await ask(e, { universe: id, userInput: 'c' });
    expect(s2.diagnostics.storage.source).toBe('database');
    // 3 stored turns and the new input; a stale cache would have missed the other engine's turn (5).
    expect(s2.diagnostics.prompt.totalMessages).toBe(7);
    other.close();
    e.close();
  });

  it('previewText is the first 280 characters on one line', async () => {
    const e = engine();
    fake.script({ text: ['line one\n\nline   two ', 'x'.repeat(400)] });
    const r = await ask(e, { userInput: 'long' });
    expect(r.previewText).toBe(('line one line two ' + 'x'.repeat(400)).slice(0, 280));
    expect(r.assistantRaw).toContain('\n');
    e.close();
  });
});

describe('images', () => {
  it('builds the provider message in the seed order and returns base64 images', async () => {
    const e = engine();
    const r = await e.generateImage({
      sceneUid: 'scene-1',
      systemPrompt: 'Painterly.',
      description: 'A harbour at dawn',
      additionalPrompt: 'no people',
      backgroundReference: { type: 'image_url', image_url: { url: 'https://example.com/bg.png' } },
      referenceImages: [
        { type: 'text', text: 'the keeper:' },
        { type: 'image_url', image_url: { url: 'https://example.com/keeper.png' } },
      ],
      imageConfig: { imageSize: '2K' },
    });
    const body = fake.requests.at(-1)!.body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'Painterly.' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/bg.png' } },
          { type: 'text', text: 'the keeper:' },
          { type: 'image_url', image_url: { url: 'https://example.com/keeper.png' } },
          { type: 'text', text: 'A harbour at dawn' },
          { type: 'text', text: 'no people' },
        ],
      },
    ]);
    expect(body.modalities).toEqual(['image', 'text']);
    expect(body.image_config).toEqual({ image_size: '2K', aspect_ratio: '16:9' });
    expect(r).toMatchObject({ sceneUid: 'scene-1', model: 'image-1', images: [{ mimeType: 'image/png' }], requestLog: { id: expect.any(String) } });
    expect(Buffer.from(r.images[0].data, 'base64').subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    for (const bad of [
      { systemPrompt: 'x', description: 'y' },
      { sceneUid: 's', systemPrompt: 'x', description: 'y', imageConfig: { imageSize: '8K' } },
      { sceneUid: 's', systemPrompt: 'x', description: 'y', imageConfig: { aspectRatio: 'wide' } },
      { sceneUid: 's', systemPrompt: 'x', description: 'y', referenceImages: [{ type: 'audio' }] },
    ]) {
      await expect(e.generateImage(bad as never)).rejects.toBeInstanceOf(BadRequestError);
    }
    e.close();
  });
});

describe('logs', () => {
  it('records every generation, pages and filters, and never holds the prompt text', async () => {
    const e = engine();
    const id = await universe(e);
    for (let i = 0; i < 5; i++) await ask(e, { universe: id, userInput: `t${i}`, gameId: i % 2 ? 'g-odd' : 'g-even', requestId: `r-${i}` });
    await e.generateImage({ sceneUid: 's', systemPrompt: SECRET, description: 'd' });
    fake.script({ status: 500 });
    await expect(ask(e, { universe: id, userInput: 'fails', requestId: 'r-bad' })).rejects.toThrow();

    const all = await e.logs.list({ pageSize: 100 });
    const mine = all.data.filter((l) => l.universeId === id || l.kind === 'image');
    expect(mine.length).toBeGreaterThanOrEqual(7);
    expect((await e.logs.list({ kind: 'image' })).data.every((l) => l.kind === 'image')).toBe(true);
    expect((await e.logs.list({ game: 'g-odd' })).data.map((l) => l.requestId).sort()).toEqual(['r-1', 'r-3']);
    expect((await e.logs.list({ requestId: 'r-bad' })).data).toMatchObject([{ status: 'error', error: expect.stringMatching(/500/) }]);
    expect((await e.logs.list({ user: 'someone-else' })).data).toEqual([]);
    const total = all.total;
    const p1 = await e.logs.list({ page: 1, pageSize: 3 });
    const p2 = await e.logs.list({ page: 2, pageSize: 3 });
    expect(p1).toMatchObject({ page: 1, pageSize: 3, total, hasMore: true });
    expect(p1.data).toHaveLength(3);
    expect(p2.data[0].id).not.toBe(p1.data[0].id);
    expect(p1.data[0].createdAt >= p2.data[0].createdAt).toBe(true);
    const last = await e.logs.list({ page: Math.ceil(total / 3), pageSize: 3 });
    expect(last.hasMore).toBe(false);
    for (const bad of [{ page: 0 }, { pageSize: 0 }, { pageSize: 101 }, { kind: 'video' }]) await expect(() => e.logs.list(bad)).rejects.toThrow(BadRequestError);
    const detail = await e.logs.get(p1.data[0].id);
    expect(detail).toMatchObject({ id: p1.data[0].id, request: expect.any(Object), response: expect.any(Object) });
    // A turn's text stays in its log, so what a statePointer later drops is not lost.
    const t4 = (await e.logs.list({ requestId: 'r-4' })).data[0];
    expect(await e.logs.get(t4.id)).toMatchObject({ request: { userInput: 't4' }, response: { assistantRaw: 'reply: t4' } });
    await expect(() => e.logs.get('nope')).rejects.toThrow(NotFoundError);
    const everything = JSON.stringify([all, ...(await Promise.all(all.data.map((l) => e.logs.get(l.id))))]);
    expect(everything).not.toContain('SECRET-PROMPT-MARKER');
    expect(everything).not.toContain('Glimmerdeep');
    e.close();
  });

  it("keeps what the provider's prompt cache served, when it said, and leaves it out when it did not", async () => {
    const e = engine();
    const id = await universe(e);
    fake.script({ text: 'cached', usage: { prompt_tokens: 300, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 280 } } });
    await ask(e, { universe: id, userInput: 'one', requestId: 'r-cached' });
    await ask(e, { universe: id, userInput: 'two', requestId: 'r-plain' });
    expect((await e.logs.list({ requestId: 'r-cached' })).data[0]).toMatchObject({ inputTokens: 300, cachedInputTokens: 280 });
    expect((await e.logs.list({ requestId: 'r-plain' })).data[0]).not.toHaveProperty('cachedInputTokens');
    e.close();
  });
});

// Keep the default reply for other files sharing the fake.
afterAll(() => {
  fake.fallback = echoLastUser;
});

describe('a universe turn as events', () => {
  it('streams the reply as it comes, then the response; a consumer that stops frees the universe and cancels the provider', async () => {
    const e = engine();
    const u = await universe(e);
    fake.script({ text: ['one ', 'two ', 'three'], chunkDelayMs: 20 });
    const turn = e.respondEvents({ model: 'game-1-lite-frozen', universe: u, userInput: 'count' });
    const deltas: string[] = [];
    let next = await turn.next();
    for (; !next.done; next = await turn.next()) deltas.push(next.value.text);
    expect(deltas).toEqual(['one ', 'two ', 'three']);
    expect(next.value.assistantRaw).toBe('one two three');

    const aborted = fake.aborted;
    let letGo!: () => void;
    fake.script({ text: ['never ', 'finished'], holdAfterFirst: new Promise<void>((r) => (letGo = r)) });
    const cut = e.respondEvents({ model: 'game-1-lite-frozen', universe: u, userInput: 'stop me' });
    expect((await cut.next()).value).toEqual({ type: 'delta', text: 'never ' });
    await cut.return(undefined as never);
    await expect.poll(() => fake.aborted).toBeGreaterThan(aborted);
    letGo();
    // The lease is free at once: the next turn is not refused with 409. The cut turn's input stays in the
    // conversation, so the request carries the two user inputs as one message (roles alternate).
    expect((await ask(e, { universe: u, userInput: 'after' })).assistantRaw).toBe('reply: stop me\n\nafter');
    expect((await runtime(e, u)).map((m) => m.content)).not.toContain('never finished');
  });
});
