import { afterAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import type { ChatStatus } from '../../src/ui/chat-controller.js';
import { loadStatus } from '../../src/ui/chat-status.js';
import { statusLine } from '../../src/ui/status-line.js';
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
      ` · head ${split.head} (memory ${split.memory}) + summaries ${split.summaries} + live ${split.live} + reply 256`,
    );
    // The compact form leaves it out.
    expect(statusLine(s, false, 99).text).not.toContain('summaries');
  });
});
