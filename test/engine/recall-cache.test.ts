import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { collect, done, engineOnFake } from '../helpers/engine.js';
import { type FakeOpenAI, isSummaryRequest } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import { join } from 'node:path';
import { openEngineSync } from '../../src/engine/open-engine.js';

/**
 * Auto recall keeps a prefix cache warm: between rotations a turn's request is the previous
 * turn's, its reply and the new message, whatever was recalled (what a turn recalls stays in its
 * user message, byte for byte); `window --at` gives back each request as it was sent.
 */
const dir = tempDir();
let fake: FakeOpenAI;
let engine: Engine;

engineOnFake(dir, (started) => ({ engine, fake } = started));

const TOPICS = ['the river and the boat', 'my sister Margaret in Lisbon', 'the garden and its roses', 'trains and timetables', 'the old lighthouse keeper'];

type Msg = { role: string; content: string };

describe('auto recall and the prompt cache', () => {
  it('between rotations each request is the previous one, its reply and the new message; window --at rebuilds every request', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Be brief.', recall: 'auto' }, 'local');
    await engine.entities.update(e.id, { budget_tokens: 600 }, 'local');
    await engine.memory.set(e.id, 'user', 'Likes boats.', 'local');
    fake.fallback = (body) => ({ text: isSummaryRequest(body) ? 'summary of the talk' : `noted, ${String(body.messages.length)} messages` });
    const sent: Array<{ seq: number; messages: Msg[]; reply: string; rotated: boolean; recalled: number }> = [];
    for (let i = 0; i < 80; i++) {
      const from = fake.requests.length;
      const events = await collect(engine.entities.send(e.id, { content: `day ${i}: we talked about ${TOPICS[i % TOPICS.length]} again` }, 'local'));
      const request = fake.requests.slice(from).filter((r) => !isSummaryRequest(r.body)).at(-1)!;
      const completion = done(events).completion;
      sent.push({
        seq: 2 * i + 1, messages: request.body.messages, reply: completion.choices[0].message.content ?? '',
        rotated: events.some((x) => x.type === 'rotation'), recalled: completion.recalled?.length ?? 0,
      });
    }
    let grown = 0;
    let grownWithRecall = 0;
    for (let k = 1; k < sent.length; k++) {
      const [before, now] = [sent[k - 1], sent[k]];
      if (now.rotated) continue;
      expect(now.messages.slice(0, before.messages.length + 1), `turn ${k}`).toEqual([...before.messages, { role: 'assistant', content: before.reply }]);
      expect(now.messages).toHaveLength(before.messages.length + 2);
      grown++;
      if (before.recalled || now.recalled) grownWithRecall++;
    }
    expect(sent.filter((s) => s.rotated).length).toBeGreaterThanOrEqual(1);
    expect(grown).toBeGreaterThan(30);
    expect(grownWithRecall).toBeGreaterThanOrEqual(3);
    // A line in view is not recalled again: no request shows the same recalled line twice.
    for (const s of sent) {
      const lines = s.messages.flatMap((m) => m.content.match(/\n#\d+ (user|assistant) \(/g) ?? []);
      expect(new Set(lines).size, `turn at seq ${s.seq}`).toBe(lines.length);
    }
    // window --at gives back exactly what was sent, up to the user message.
    for (const s of sent) expect((await engine.entities.windowAt(e.id, String(s.seq), 'local')).prompt, `seq ${s.seq}`).toEqual(s.messages);
  });

  it("a new process's first turn rebuilds the live messages' recall from the turn records: its request still only grows at its end", async () => {
    const db = join(dir, 'two-processes.db');
    const first = openEngineSync({ db, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }) });
    const e = await first.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
    await first.entities.update(e.id, { budget_tokens: 600 }, 'local');
    let last: { messages: Msg[]; reply: string } | undefined;
    // Until the live window holds two recalling user messages, and the turn after has no rotation to do.
    const roomy = (m: Msg[]) => m.filter((x) => x.content.includes('<recalled>')).length >= 1 && m.reduce((n, x) => n + x.content.length, 0) < 1600;
    for (let i = 0; i < 200 && !(last && roomy(last.messages)); i++) {
      const from = fake.requests.length;
      const events = await collect(first.entities.send(e.id, { content: `day ${i}: we talked about ${TOPICS[i % TOPICS.length]} again` }, 'local'));
      const request = fake.requests.slice(from).filter((r) => !isSummaryRequest(r.body)).at(-1)!;
      last = { messages: request.body.messages, reply: done(events).completion.choices[0].message.content ?? '' };
    }
    first.close();
    expect(last!.messages.filter((m) => m.content.includes('<recalled>')).length).toBeGreaterThanOrEqual(1);
    const second = openEngineSync({ db, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }) });
    try {
      const from = fake.requests.length;
      const events = await collect(second.entities.send(e.id, { content: 'and the boat?' }, 'local'));
      expect(events.some((x) => x.type === 'rotation')).toBe(false);
      const messages = fake.requests[from].body.messages as Msg[];
      expect(messages.slice(0, last!.messages.length + 1)).toEqual([...last!.messages, { role: 'assistant', content: last!.reply }]);
    } finally {
      second.close();
    }
  });
});
