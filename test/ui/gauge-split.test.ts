import { afterAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import type { ChatStatus } from '../../src/ui/chat-controller.js';
import { loadStatus } from '../../src/ui/chat-status.js';
import { statusLine } from '../../src/ui/status-line.js';
import { windowText } from '../../src/ui/chat-commands.js';
import { recallNotice } from '../../src/ui/finish-notice.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

/** The REPL gauge's split (issue 33): head (instructions and pinned memory), summaries, live messages, the reply's reserve. */
const engine = makeEngine(tempDir());
afterAll(() => engine.close());

describe('the gauge split', () => {
  it('reads the head, summaries and live messages of the next prompt, and the reserve when the route is known', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are Ada, a patient tutor.' }, 'local');
    await engine.entities.update(e.id, { budget_tokens: 200 }, 'local');
    for (let i = 0; i < 12; i++) await collect(engine.entities.send(e.id, { content: `a message about the river and the mill, number ${i}` }, 'local'));
    const backend = new LocalBackend(engine);
    const prev: ChatStatus = { kind: 'entity', id: e.id, label: e.id, backend: 'local' };
    const bare = await loadStatus({ backend }, { kind: 'entity', id: e.id }, prev);
    expect(bare.split!.memory).toBe(0);
    expect(bare.split!.reserve).toBeUndefined();
    await engine.memory.set(e.id, 'user', 'Ada lives in Porto', 'local');
    const s = await loadStatus({ backend, cutLimit: () => ({ maxTokens: 256, source: 'models.mgpt-1-27b.maxTokens', raise: '' }) }, { kind: 'entity', id: e.id }, prev);
    const split = s.split!;
    expect(split.memory).toBeGreaterThan(0);
    expect(split.head).toBe(bare.split!.head + split.memory);
    expect(split.summaries).toBeGreaterThan(0);
    expect(split.summaries + split.live).toBe(s.window!.tokens);
    expect(split.reserve).toBe(256);
    expect(statusLine(s, false, 300).text).toContain(
      ` · head ${split.head} (memory ${split.memory}) + summaries ${split.summaries} + live ${split.live}${split.recalled ? ` + recalled ${split.recalled}` : ''} + reply 256`,
    );
    // The compact form leaves it out.
    expect(statusLine(s, false, 99).text).not.toContain('summaries');
  });
});

describe('/window and the recall notice in the REPL', () => {
  it('/window lists every part of the next request with its tokens, summing to the request', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are Ada.' }, 'local');
    await engine.entities.update(e.id, { budget_tokens: 200 }, 'local');
    for (let i = 0; i < 12; i++) await collect(engine.entities.send(e.id, { content: `a message about the river and the mill, number ${i}` }, 'local'));
    await engine.memory.set(e.id, 'user', 'Ada lives in Porto', 'local');
    const backend = new LocalBackend(engine);
    const w = await backend.getWindowPrompt(e.id);
    const text = await windowText({ backend }, { kind: 'entity', id: e.id });
    const p = w.parts;
    expect(text.split('\n')[1]).toBe(
      `next request: ${w.prompt_tokens} tokens = instructions ${p.instructions.tokens} + pinned memory ${p.memory.tokens} + summaries ${p.summaries.tokens} + live messages ${p.messages.tokens} + recalled ${p.recalled.tokens}`,
    );
    expect(p.instructions.tokens + p.memory.tokens + p.summaries.tokens + p.messages.tokens + p.recalled.tokens).toBe(w.prompt_tokens);
    expect(text).toMatch(/^#1–\d+ +summary /m);
  });

  it('the recall notice gives each recalled line\'s text on a line of its own, made safe for the terminal', () => {
    const notice = recallNotice([
      { seq: 1, role: 'user', tokens: 14, content: 'My sister moved to Lisbon.\nShe teaches \x1b[31mchemistry' },
      { seq: 2, role: 'assistant', tokens: 6, content: 'reply: noted' },
    ]);
    expect(notice).toBe('recalled 2 messages (#1, #2), 20 tokens\n  #1 user: My sister moved to Lisbon. ⏎ She teaches chemistry\n  #2 assistant: reply: noted');
    // The gauge's split names the recalled lines the next request carries, when it carries any.
    const status: ChatStatus = { kind: 'entity', id: 'x', label: 'x', backend: 'local', split: { head: 1, memory: 0, summaries: 2, live: 3, recalled: 4 } };
    expect(statusLine(status, false, 300).text).toContain('head 1 + summaries 2 + live 3 + recalled 4');
    // From a server that sends seqs only: the first line, as before.
    expect(recallNotice([{ seq: 5, role: 'user', tokens: 9 }])).toBe('recalled 1 message (#5), 9 tokens');
  });
});
