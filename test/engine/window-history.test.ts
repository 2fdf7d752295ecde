import { describe, expect, it } from 'vitest';
import { packIds, unpackIds } from '../../src/engine/entities/window/block-ids.js';
import { PREAMBLES, decodeTail, encodeTail } from '../../src/engine/entities/window/text-refs.js';
import { inViewRecall } from '../../src/engine/entities/window/recall-block.js';
import { storedForm } from '../../src/engine/entities/window/load-window.js';
import type { EngineDeps } from '../../src/engine/deps.js';
import type { MessageRow } from '../../src/store/types.js';

const row = (seq: number, content: string): MessageRow => ({ seq, role: seq % 2 ? 'user' : 'assistant', content, tokens: 1, createdAt: '2026-11-26T10:11:12.000Z' });
const rows = [row(3, 'the captain counted forty barrels of rum in the hold'), row(4, 'and I wrote every one of them in the ledger, twice over'), row(9, 'a message that the recall cut short, somewhere in the middle')];
const sources = new Map(rows.map((r) => [r.seq, r]));
/** Deps whose store answers messagesAt from `rows`. */
const deps = { store: { entities: { messagesAt: async (_: string, seqs: number[]) => rows.filter((r) => seqs.includes(r.seq)) } } } as unknown as EngineDeps;

describe('the window history keeps what came after the window by reference, and gives it back exactly', () => {
  it('a recall message as built today is stored as seqs and comes back byte for byte', async () => {
    const line = (m: MessageRow, text = m.content) => `#${m.seq} ${m.role} (2026-11-26 10:11): ${text}`;
    const recall = inViewRecall({ text: [line(rows[0]), line(rows[1]), line(rows[2], rows[2].content.slice(0, 30))].join('\n'), tokens: 1, messages: [] });
    const { text } = recall;
    // Today's preamble is one the history knows (a new one must be appended to PREAMBLES).
    expect(PREAMBLES).toContain(text.split('\n')[0]);
    const tail = [{ role: 'system' as const, content: text }];
    const stored = encodeTail(tail, sources);
    expect(stored).toEqual([{ r: 'system', q: [1, 3, 4, [9, 30]] }]);
    expect(await decodeTail(deps, 'e', JSON.parse(JSON.stringify(stored)))).toEqual(tail);
    // The form a turn record keeps a user message's recall in: the same seqs.
    expect(storedForm(recall, sources).stored).toEqual({ r: 'user', q: [1, 3, 4, [9, 30]] });
    // A record written when recall went as a system message of its own names the first preamble, and still decodes.
    expect(await decodeTail(deps, 'e', [{ r: 'system', q: [0, 3] }])).toEqual([{ role: 'system', content: `${PREAMBLES[0]}\n#3 user (2026-11-26 10:11): ${rows[0].content}` }]);
  });

  it('any other text is kept as literal pieces and references, and a message of another shape as it was', async () => {
    const odd = `Notes: ${rows[0].content} — and — ${rows[1].content.slice(0, 40)}!`;
    const tail = [{ role: 'system' as const, content: odd }, { role: 'assistant' as const, content: null, tool_calls: [] } as never, { role: 'system' as const, content: 'short' }];
    const stored = encodeTail(tail, sources);
    expect(stored[0]).toEqual({ r: 'system', p: ['Notes: ', [3, rows[0].content.length], ' — and — ', [4, 40], '!'] });
    expect(stored[1]).toBe(tail[1]);
    expect(await decodeTail(deps, 'e', JSON.parse(JSON.stringify(stored)))).toEqual(tail);
  });

  it('folded block ids pack to 22 characters a UUID, and anything else stays a JSON list', () => {
    const ids = ['0f8e6a52-3c1d-4b7e-9a2f-5d6c7b8a9e01', 'ffffffff-0000-4000-8000-123456789abc'];
    const packed = packIds(ids);
    expect(packed.length).toBeLessThan(JSON.stringify(ids).length * 0.62);
    expect(unpackIds(packed)).toEqual(ids);
    expect(unpackIds(packIds(['not-a-uuid', ids[0]]))).toEqual(['not-a-uuid', ids[0]]);
    expect(unpackIds(packIds([]))).toEqual([]);
  });
});

describe('window --at records the head as it was sent', () => {
  it("a request's system text after the instructions (the facade's) is in that turn's prompt, and only in that turn's", async () => {
    const { makeEngine, collect } = await import('../helpers/engine.js');
    const { tempDir } = await import('../helpers/temp.js');
    const engine = makeEngine(tempDir());
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Be kind.' }, 'local');
    await collect(engine.entities.send(id, { content: 'first', extras: { system: 'Answer in French.' } }, 'local'));
    await collect(engine.entities.send(id, { content: 'second' }, 'local'));
    expect((await engine.entities.windowAt(id, '1', 'local')).prompt[0]).toEqual({ role: 'system', content: 'Be kind.\n\nAnswer in French.' });
    const second = await engine.entities.windowAt(id, '3', 'local');
    expect(second.prompt[0]).toEqual({ role: 'system', content: 'Be kind.' });
    expect(second.prompt.slice(1).map((m) => m.content)).toEqual([expect.stringContaining('first'), expect.stringContaining('first'), 'second']);
    engine.close();
  });
});
