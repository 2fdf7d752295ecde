import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../../src/backends/local.js';
import type { Engine } from '../../../src/engine/engine.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../../helpers/fake-openai.js';
import { collect, makeEngine, sqliteOf } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/temp.js';
import { ALL, CHATGPT, CLAUDE, FIXTURES, transcripts } from './expected.js';

const dir = tempDir('mgpt-imports-');
const FILLER = 'We went through the rest of it slowly, one point after another, and agreed to come back to it later on. Then we talked about the weather, the neighbours, the price of bread and the long drive home.';

describe('importing ChatGPT, Claude and Open WebUI exports (local engine)', () => {
  for (const x of ALL) {
    it(`${x.source}: each conversation's current path, message by message; a second run imports nothing`, async () => {
      const engine = makeEngine(dir);
      const backend = new LocalBackend(engine);
      const first = await backend.importChats(join(FIXTURES, x.file), {});
      expect(first.source).toBe(x.source);
      expect(first.conversations.map((c) => c.outcome)).toEqual(x.outcomes);
      expect(first.conversations.map((c) => c.branches_left_out)).toEqual(x.branches);
      expect(await transcripts(backend)).toEqual(x.entities);
      const again = await backend.importChats(join(FIXTURES, x.file), { from: x.source });
      expect(again.totals.imported).toBe(0);
      expect(again.entities).toEqual([]);
      expect(await transcripts(backend)).toEqual(x.entities);
      await engine.close();
    });

    it(`${x.source}: a truncated file changes nothing and names the byte where it ends`, async () => {
      const engine = makeEngine(dir);
      const backend = new LocalBackend(engine);
      const truncated = x.file.replace(/-(conversations|chat-export)\.json$/, '-truncated.json');
      const size = readFileSync(join(FIXTURES, truncated)).length;
      await expect(backend.importChats(join(FIXTURES, truncated), {})).rejects.toThrow(`truncated (at byte ${size})`);
      expect((await backend.listEntities()).data).toEqual([]);
      await engine.close();
    });
  }

  it("reads ChatGPT's .zip in place, to the same transcripts as its conversations.json", async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const res = await backend.importChats(join(FIXTURES, 'chatgpt-export.zip'), {});
    expect(res.source).toBe('chatgpt');
    expect(await transcripts(backend)).toEqual(CHATGPT.entities);
    await engine.close();
  });

  it('a conversation cut off later in the file: nothing is imported (the conversations are counted before any is written); the whole file then imports them all', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const whole = readFileSync(join(FIXTURES, CLAUDE.file));
    const cut = whole.indexOf('"Bash Command') + 40;
    const file = join(dir, 'claude-cut.json');
    writeFileSync(file, whole.subarray(0, cut));
    await expect(backend.importChats(file, {})).rejects.toThrow(`(at byte ${cut})`);
    expect(Object.keys(await transcripts(backend))).toEqual([]);
    const rest = await backend.importChats(join(FIXTURES, CLAUDE.file), {});
    expect(rest.conversations.map((c) => c.outcome)).toEqual(CLAUDE.outcomes);
    expect(await transcripts(backend)).toEqual(CLAUDE.entities);
    await engine.close();
  });

  it('corrupt JSON inside a conversation names that conversation and its byte', async () => {
    const engine = makeEngine(dir);
    // A colon lost in the last message of the first conversation (after non-ASCII text: offsets are bytes).
    const whole = readFileSync(join(FIXTURES, CLAUDE.file), 'utf8');
    const text = whole.replace('"text": "Around 24', '"text" "Around 24');
    const file = join(dir, 'claude-corrupt.json');
    writeFileSync(file, text);
    const at = Buffer.byteLength(text.slice(0, text.indexOf('"text" "Around 24') + '"text" '.length));
    await expect(new LocalBackend(engine).importChats(file, {})).rejects.toThrow(new RegExp(`conversation 1 is not valid JSON .*\\(at byte ${at}\\)`));
    expect((await engine.entities.list('local')).data).toEqual([]);
    await engine.close();
  });

  it('--from auto says when it cannot tell the format; a wrong --from is refused by the field it lacks', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const write = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
    await expect(backend.importChats(write('other.json', '[{"foo": 1}]'), {})).rejects.toThrow('import: cannot tell which tool made this export (no mapping, chat_messages or chat.history)');
    await expect(backend.importChats(write('none.json', '[]'), {})).rejects.toThrow('import: the export holds no conversations, so its format cannot be told');
    expect((await backend.importChats(join(dir, 'none.json'), { from: 'claude' })).conversations).toEqual([]);
    await expect(backend.importChats(join(FIXTURES, CHATGPT.file), { from: 'claude' })).rejects.toThrow('import: conversation 1 (at byte 4) has no chat_messages: this is not a claude export');
    await expect(backend.importChats(write('mgpt.json', '{"manifest": {}, "transcript": []}'), {})).rejects.toThrow('import: this is an mgpt export, not a chat export');
    expect((await backend.listEntities()).data).toEqual([]);
    await engine.close();
  });

  it('--dry-run counts messages and tokens and writes nothing; --only and --since choose conversations', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const dry = await backend.importChats(join(FIXTURES, CHATGPT.file), { dryRun: true });
    expect(dry.conversations.map((c) => [c.outcome, c.messages])).toEqual([['planned', 4], ['skipped', 0], ['planned', 4]]);
    expect(dry.totals.tokens).toBeGreaterThan(0);
    expect((await backend.listEntities()).data).toEqual([]);
    const only = await backend.importChats(join(FIXTURES, CLAUDE.file), { only: ['Bash Command for OpenAI API'], since: '2024-04-01' });
    expect(only.conversations.map((c) => c.title)).toEqual(['Bash Command for OpenAI API']);
    const since = await backend.importChats(join(FIXTURES, CLAUDE.file), { since: '2024-04-03' });
    expect(since.conversations.map((c) => c.outcome)).toEqual(['skipped', 'skipped']);
    await expect(backend.importChats(join(FIXTURES, CLAUDE.file), { since: 'last tuesday' })).rejects.toThrow('is not a date');
    // Read in the process's zone, a date-time without one would mean different instants locally and on a server: refused.
    await expect(backend.importChats(join(FIXTURES, CLAUDE.file), { since: '2024-04-03T00:00:00' })).rejects.toMatchObject({ status: 400, hint: expect.stringMatching(/2026-11-26T10:00:00Z/) });
    await expect(backend.importChats(join(FIXTURES, CLAUDE.file), { since: '2024-02-30' })).rejects.toThrow('is not a date');
    expect((await backend.importChats(join(FIXTURES, CLAUDE.file), { since: '2024-04-03T02:00:00+02:00', dryRun: true })).conversations.map((c) => c.outcome)).toEqual(['skipped', 'skipped']);
    await engine.close();
  });

  it('--update appends what a conversation gained since; an unchanged one is left as it is', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const raw = JSON.parse(readFileSync(join(FIXTURES, CLAUDE.file), 'utf8'));
    const file = join(dir, 'claude-grown.json');
    copyFileSync(join(FIXTURES, CLAUDE.file), file);
    await backend.importChats(file, {});
    raw[0].chat_messages.push(
      { uuid: 'c1-h3', text: 'And the flour?', sender: 'human', created_at: '2024-04-05T10:00:00Z', parent_message_uuid: 'c1-a2' },
      { uuid: 'c1-a3', text: 'Rye helps.', sender: 'assistant', created_at: '2024-04-05T10:00:05Z', parent_message_uuid: 'c1-h3' },
    );
    raw[0].current_leaf_message_uuid = 'c1-a3';
    writeFileSync(file, JSON.stringify(raw));
    const res = await backend.importChats(file, { update: true });
    expect(res.conversations.map((c) => c.outcome)).toEqual(['updated', 'skipped', 'unchanged']);
    expect(res.conversations[0].seqs).toEqual([5, 6]);
    const t = await transcripts(backend);
    expect(t['Sourdough starter'].slice(4)).toEqual([['user', 'And the flour?'], ['assistant', 'Rye helps.']]);
    expect(t['Bash Command for OpenAI API']).toEqual(CLAUDE.entities['Bash Command for OpenAI API']);
    await engine.close();
  });

  it('messages keep their times as created_at', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    await backend.importChats(join(FIXTURES, CLAUDE.file), { only: ['Sourdough starter'] });
    const e = (await backend.listEntities()).data[0];
    const times = (await backend.listMessages(e.id)).data.map((m) => m.created_at);
    expect(times).toEqual(['2024-04-02T09:00:10.000Z', '2024-04-02T09:00:30.000Z', '2024-04-02T09:12:00.000Z', '2024-04-02T09:12:10.000Z']);
    expect(e.created_at).toBe('2024-04-02T09:00:00.000Z');
    await engine.close();
  });

  it('a conversation larger than the window: the tail that fits stays live, the rest is one plain summary block, and search finds it', async () => {
    const engine = makeEngine(dir, { windowBudget: 600 });
    const backend = new LocalBackend(engine);
    const file = join(dir, 'long.json');
    const messages = Array.from({ length: 40 }, (_, i) => ({
      uuid: `m${i}`,
      sender: i % 2 ? 'assistant' : 'human',
      text: i === 1 ? 'The secret word is aubergine, remember it.' : `Message number ${i} about nothing much at all, said at length so that forty of them do not fit a small window.`,
      created_at: new Date(Date.UTC(2023, 0, 1 + i)).toISOString(),
    }));
    writeFileSync(file, JSON.stringify([{ uuid: 'long-1', name: 'Long talk', created_at: '2023-01-01T00:00:00Z', updated_at: '2023-02-09T00:00:00Z', chat_messages: messages }]));
    const res = await backend.importChats(file, {});
    const e = res.entities[0];
    expect(e.transcript.messages).toBe(40);
    const w = await backend.getWindow(e.id);
    expect(w.blocks[0].kind).toBe('summary');
    // A 600-token budget leaves a summary 60 tokens: the full note does not fit, so the short one
    // stands whole (it used to be the full note cut mid-sentence).
    expect(w.blocks[0].content).toMatch(/^Messages 1-\d+ are out of the live window; search and recall reach them\.$/);
    expect(w.blocks.at(-1)!.covers).toEqual([40, 40]);
    expect(w.tokens).toBeLessThanOrEqual(600);
    const hits = await backend.search({ q: 'aubergine' } as never);
    expect(hits.data.map((h: any) => h.seq)).toEqual([2]);
    await engine.close();
  });
});

describe('--into: every conversation into one entity, in time order', () => {
  let fake: FakeOpenAI;
  let engine: Engine;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.fallback = echoLastUser;
    engine = makeEngine(dir, { fake, windowBudget: 200 });
  });
  afterAll(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('three conversations in time order, each opened by its marker; a question about the first recalls its message (recall auto)', async () => {
    const backend = new LocalBackend(engine);
    // The file lists the newest first, as ChatGPT's export does.
    const convs = ['Alpha: the boat is named Marigold.', 'Beta: we talked about taxes.', 'Gamma: a recipe for soup.'].map((text, i) => ({
      uuid: `conv-${i}`,
      name: text.split(':')[0],
      created_at: new Date(Date.UTC(2024, i, 1)).toISOString(),
      updated_at: new Date(Date.UTC(2024, i, 1)).toISOString(),
      chat_messages: [
        { uuid: `u${i}`, sender: 'human', text, created_at: new Date(Date.UTC(2024, i, 1, 10)).toISOString() },
        { uuid: `a${i}`, sender: 'assistant', text: `Noted (${i}). ${FILLER}`, created_at: new Date(Date.UTC(2024, i, 1, 11)).toISOString() },
      ],
    }));
    const file = join(dir, 'three.json');
    writeFileSync(file, JSON.stringify(convs.reverse()));
    const res = await backend.importChats(file, { into: 'memory' });
    expect(res.entities.map((e) => e.name)).toEqual(['memory']);
    expect(res.conversations.map((c) => [c.title, c.outcome, c.seqs])).toEqual([
      ['Alpha', 'created', [1, 2]],
      ['Beta', 'appended', [3, 4]],
      ['Gamma', 'appended', [5, 6]],
    ]);
    const t = (await transcripts(backend)).memory;
    expect(t.map((l) => l[1])).toEqual([
      '[Imported from Claude: "Alpha", 2024-01-01]\n\nAlpha: the boat is named Marigold.',
      `Noted (0). ${FILLER}`,
      '[Imported from Claude: "Beta", 2024-02-01]\n\nBeta: we talked about taxes.',
      `Noted (1). ${FILLER}`,
      '[Imported from Claude: "Gamma", 2024-03-01]\n\nGamma: a recipe for soup.',
      `Noted (2). ${FILLER}`,
    ]);
    // The first conversation is folded out of the live window: only recall can bring it back.
    const id = res.entities[0].id;
    const window = await backend.getWindow(id);
    expect(window.blocks[0].kind).toBe('summary');
    expect(JSON.stringify(window.blocks)).not.toContain('Marigold');
    const second = await backend.importChats(file, { into: 'memory' });
    expect(second.totals.imported).toBe(0);
    fake.requests.length = 0;
    await collect(backend.sendMessage(id, { content: 'What is the boat named?', stream: false } as never));
    const prompt = JSON.stringify(fake.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body.messages);
    expect(prompt).toContain('Marigold');
  });
});

describe('--summarize', () => {
  it("the entity's model writes the summary of what does not fit; without it no model is called", async () => {
    const fake = await startFakeOpenAI();
    fake.fallback = echoLastUser;
    const engine = makeEngine(dir, { fake, windowBudget: 200 });
    try {
      const backend = new LocalBackend(engine);
      const chat_messages = Array.from({ length: 12 }, (_, i) => ({ uuid: `s${i}`, sender: i % 2 ? 'assistant' : 'human', text: `${i}: ${FILLER}`, created_at: new Date(Date.UTC(2024, 0, 1, i)).toISOString() }));
      const conv = (id: string) => ({ uuid: id, name: id, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T12:00:00Z', chat_messages });
      const file = join(dir, 'summarize.json');
      writeFileSync(file, JSON.stringify([conv('plain')]));
      await backend.importChats(file, {});
      expect(fake.requests).toEqual([]);
      writeFileSync(file, JSON.stringify([conv('summarized')]));
      const res = await backend.importChats(file, { summarize: true });
      const w = await backend.getWindow(res.entities[0].id);
      expect(w.blocks[0].kind).toBe('summary');
      expect(w.blocks[0].content).toMatch(/^summary: /);
      expect(fake.requests.length).toBeGreaterThan(0);
    } finally {
      await engine.close();
      await fake.close();
    }
  });
});

describe('--summarize: the target entity, and a cancel', () => {
  const messages = (tag: string) => Array.from({ length: 12 }, (_, i) => ({ uuid: `${tag}${i}`, sender: i % 2 ? 'assistant' : 'human', text: `${i}: ${FILLER}`, created_at: new Date(Date.UTC(2024, 0, 1, i)).toISOString() }));
  const conv = (id: string) => ({ uuid: id, name: id, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T12:00:00Z', chat_messages: messages(id) });

  it("--into an existing entity: its own model writes the summary, after its instructions and pinned memory", async () => {
    const fake = await startFakeOpenAI();
    fake.fallback = echoLastUser;
    // The provider model is the platform id asked for: the requests say which model the import used.
    const engine = makeEngine(dir, { windowBudget: 200, route: (id) => ({ provider: 'openai', baseUrl: fake.url, model: id, maxRetries: 0 }) });
    try {
      const backend = new LocalBackend(engine);
      const e = await backend.createEntity({ model: 'mgpt-1-27b', name: 'Target', instructions: 'You are terse.' });
      await backend.setMemory(e.id, 'user', 'The user is called Ada.');
      sqliteOf(engine).db.prepare('UPDATE entities SET model = ? WHERE id = ?').run('mgpt-other', e.id);
      const file = join(dir, 'summarize-into.json');
      writeFileSync(file, JSON.stringify([conv('into')]));
      await backend.importChats(file, { into: 'Target', summarize: true });
      expect(fake.requests.length).toBeGreaterThan(0);
      for (const r of fake.requests) {
        expect(r.body.model).toBe('mgpt-other');
        const system = r.body.messages.filter((m: { role: string }) => m.role === 'system').map((m: { content: string }) => m.content);
        expect(system).toHaveLength(1);
        expect(system[0]).toMatch(/^You are terse\.\n\nPinned memory:\n.*The user is called Ada\./);
      }
    } finally {
      await engine.close();
      await fake.close();
    }
  });

  it('an account without funds is refused --summarize before anything is read, as a turn is; without it the import goes on', async () => {
    const engine = makeEngine(dir, { windowBudget: 200 });
    try {
      const backend = new LocalBackend(engine);
      // Metered, and spent down to nothing (as turns leave it).
      await engine.accounts.topup('local', 1);
      sqliteOf(engine).db.prepare(`UPDATE accounts SET balance_usd = 0 WHERE name = 'local'`).run();
      const file = join(dir, 'summarize-unfunded.json');
      writeFileSync(file, JSON.stringify([conv('unfunded')]));
      await expect(backend.importChats(file, { summarize: true })).rejects.toMatchObject({ status: 402, message: expect.stringMatching(/insufficient balance/) });
      expect((await backend.listEntities()).data).toEqual([]);
      expect((await backend.importChats(file, {})).totals.imported).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it('a cancel during a summary: the conversations before it stay, it and those after leave nothing', async () => {
    const fake = await startFakeOpenAI();
    const abort = new AbortController();
    const engine = makeEngine(dir, { fake, windowBudget: 200 });
    try {
      const backend = new LocalBackend(engine);
      let n = 0;
      // The first conversation's summary answers; the second's request is where the user presses Ctrl-C.
      fake.fallback = (body) => {
        if (++n > 1 && !abort.signal.aborted) abort.abort();
        return { ...echoLastUser(body), delayMs: n > 1 ? 2000 : 0 };
      };
      const file = join(dir, 'summarize-cancel.json');
      writeFileSync(file, JSON.stringify([conv('first'), conv('second'), conv('third')]));
      await expect(backend.importChats(file, { summarize: true }, undefined, abort.signal)).rejects.toMatchObject({ code: 'cancelled' });
      expect(Object.keys(await transcripts(backend))).toEqual(['first']);
      const w = await backend.getWindow((await backend.listEntities()).data[0].id);
      expect(w.blocks[0].content).toMatch(/^summary: /);
      // Run again: the first is skipped, the others come in whole.
      fake.fallback = echoLastUser;
      const again = await backend.importChats(file, { summarize: true });
      expect(again.conversations.map((c) => c.outcome)).toEqual(['skipped', 'created', 'created']);
    } finally {
      await engine.close();
      await fake.close();
    }
  });
});

describe('a conversation of thousands of messages', () => {
  it('is written by the large-write worker in one transaction, with its source row (a re-run skips it)', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const file = join(dir, 'big.json');
    const chat_messages = Array.from({ length: 1200 }, (_, i) => ({ uuid: `b${i}`, sender: i % 2 ? 'assistant' : 'human', text: `line ${i}`, created_at: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString() }));
    writeFileSync(file, JSON.stringify([{ uuid: 'big-1', name: 'Big', created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-02T00:00:00Z', chat_messages }]));
    const res = await backend.importChats(file, {});
    expect(res.entities[0].transcript.messages).toBe(1200);
    const t = (await transcripts(backend)).Big;
    expect(t.slice(0, 2)).toEqual([['user', 'line 0'], ['assistant', 'line 1']]);
    expect((await backend.listMessages(res.entities[0].id, { after: 1195 })).data.map((m) => m.content)).toEqual(['line 1195', 'line 1196', 'line 1197', 'line 1198', 'line 1199']);
    expect((await backend.importChats(file, {})).totals.imported).toBe(0);
    await engine.close();
  });
});
