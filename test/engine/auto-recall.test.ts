import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { bytes, collect, done, engineOnFake, makeEngine } from '../helpers/engine.js';
import type { FakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';

/** Automatic recall (issue 32) on the embedded engine: what reaches the prompt, and what is never stored. */
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;

engineOnFake(dir, (started) => ({ engine, fake } = started));

const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

async function chatted(recall: 'auto' | 'off', turns: number): Promise<string> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', recall }, 'local');
  await engine.entities.update(e.id, { budget_tokens: 300 }, 'local');
  await collect(engine.entities.send(e.id, { content: 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.' }, 'local'));
  for (let i = 0; i < turns; i++) await collect(engine.entities.send(e.id, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
  return e.id;
}

function lastPrompt(): Array<{ role: string; content: string }> {
  const chat = fake.requests.filter((r) => !JSON.stringify(r.body.messages).includes('Summarize'));
  return chat.at(-1)!.body.messages;
}

describe('automatic recall', () => {
  it('puts a folded fact that shares only a stem with the question before the new message, with its seq, and stores none of it', async () => {
    const id = await chatted('auto', 40);
    const window = await engine.entities.window(id, 'local');
    expect(window.blocks.find((b) => b.kind === 'message')!.covers[0]).toBeGreaterThan(2);
    const events = await collect(engine.entities.send(id, { content: 'Which city is my sister living in these days?' }, 'local'));
    const prompt = lastPrompt();
    // In the new message, before its text: never a system message between the turns (chat templates refuse it).
    expect(prompt.filter((m) => m.role === 'system')).toHaveLength(1);
    const message = prompt.at(-1)!;
    expect(message.role).toBe('user');
    expect(message.content).toMatch(/^<recalled>\nRecalled from earlier in this conversation/);
    expect(message.content).toMatch(/\n#1 user \(\d{4}-\d\d-\d\d \d\d:\d\d\): My sister Margaret moved to Lisbon/);
    expect(message.content).toMatch(/\n<\/recalled>\n\nWhich city is my sister living in these days\?$/);
    expect(done(events).completion.recalled?.map((m) => m.seq)).toContain(1);
    // Never stored: the transcript and the window hold the turn's two messages, not the recall.
    const messages = (await engine.entities.messages(id, { after: 80 }, 'local')).data;
    expect(messages.map((m) => m.content).join('\n')).not.toContain('Recalled from earlier in this conversation');
    const after = await engine.entities.window(id, 'local');
    // (A summary may quote it: the fake's summary repeats the start of what it folds.)
    expect(after.blocks.filter((b) => b.kind === 'message').map((b) => b.content).join('\n')).not.toContain('Recalled from earlier in this conversation');
    // The log record lists what was recalled.
    const logs = await engine.logs.list({ pageSize: 5 });
    const record = await engine.logs.get(logs.data.find((l) => l.facade === 'recall')!.id);
    expect((record.request as { recalled: Array<{ seq: number }> }).recalled.map((m) => m.seq)).toContain(1);
  });

  it('a turn with nothing relevant sends exactly the request it would without recall', async () => {
    const withRecall = await chatted('auto', 12);
    await collect(engine.entities.send(withRecall, { content: 'Do you enjoy astronomy?' }, 'local'));
    const recalled = lastPrompt();
    const without = await chatted('off', 12);
    await collect(engine.entities.send(without, { content: 'Do you enjoy astronomy?' }, 'local'));
    expect(recalled).toEqual(lastPrompt());
  });

  it('recalled lines count in the window: a turn recalls only into the room left under the model, and the rotating turn recalls after its fold', async () => {
    // A model of 700 tokens with 100 kept for the reply; every message names the garden, so every turn may recall.
    const small = makeEngine(dir, {
      route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0, contextSize: 700, maxTokens: 100 }),
    });
    const tok = await loadTokenEstimator();
    try {
      const e = await small.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
      const from = fake.requests.length;
      let rotatingRecalls = 0;
      for (let i = 0; i < 40; i++) {
        const events = await collect(small.entities.send(e.id, { content: `the garden and ${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
        if (events.some((x) => x.type === 'rotation') && done(events).completion.recalled?.length) rotatingRecalls++;
      }
      const replies = fake.requests.slice(from).filter((r) => !JSON.stringify(r.body.messages).includes('Pause the conversation'));
      for (const r of replies) {
        const text = (r.body.messages as Array<{ content: string }>).map((m) => m.content).join('\n');
        expect(tok.count(text)).toBeLessThanOrEqual(600);
      }
      expect(replies.some((r) => JSON.stringify(r.body.messages).includes('<recalled>'))).toBe(true);
      expect(rotatingRecalls).toBeGreaterThan(0);
    } finally {
      small.close();
    }
  });

  it('takes "auto", "tool", "off", true and false, and shows the mode', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
    expect(e.recall).toBe('auto');
    expect((await engine.entities.update(e.id, { recall: true }, 'local')).recall).toBe('tool');
    expect((await engine.entities.update(e.id, { recall: 'off' }, 'local')).recall).toBeUndefined();
    await expect(engine.entities.update(e.id, { recall: 'sometimes' as never }, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/recall must be "auto", "tool" or "off"/) });
  });

  it('export and import carry the mode (an imported copy of an auto entity recalls too)', async () => {
    for (const mode of ['auto', 'tool'] as const) {
      const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: mode }, 'local');
      for (const format of ['json', 'tar'] as const) {
        const archive = await bytes(await engine.entities.export(e.id, format, 'local'));
        expect((await engine.entities.import(archive, format, {}, 'local')).recall).toBe(mode);
      }
    }
    const off = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
    const archive = await bytes(await engine.entities.export(off.id, 'json', 'local'));
    expect(archive.toString()).not.toContain('"recall"');
    expect((await engine.entities.import(archive, 'json', {}, 'local')).recall).toBeUndefined();
  });
});
