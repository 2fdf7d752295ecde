import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError, NotFoundError } from '../../src/core/errors.js';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { isSummaryRequest } from '../helpers/fake-openai.js';
import { collect, contractTargets, useContractTarget } from './targets.js';

// What an MCP client asks of an entity beyond the seed (recall in a budget, an exchange recorded
// without a model call), through the Backend interface on all three configurations.

const targets = await contractTargets('the recall and exchange contract');

describe.each(targets)('recall and exchange contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-exchange', name, make);
  const b = () => ctx.t.backend;
  const entity = async () => (await b().createEntity({ model: 'mgpt-1-27b', recall: 'off' })).id;

  it('stores an exchange as a turn would (transcript, window, alternation), bills nothing, and the next turn sees it', async () => {
    const id = await entity();
    const stored = await b().appendExchange(id, { content: 'The cat is named Pixel.', reply: 'Noted.' });
    expect(stored.data.map((m) => [m.seq, m.role, m.content])).toEqual([[1, 'user', 'The cat is named Pixel.'], [2, 'assistant', 'Noted.']]);
    const w = await b().getWindow(id);
    expect(checkWindowInvariant(w.blocks, 2)).toBeNull();
    expect(w.tokens).toBe(stored.data[0]!.tokens + stored.data[1]!.tokens);
    const e = await b().getEntity(id);
    expect(e.transcript).toMatchObject({ messages: 2, tokens: w.tokens });
    const asked = ctx.fake.requests.length;
    await collect(b().sendMessage(id, { content: 'what is my cat called?' }));
    const sent = ctx.fake.requests.slice(asked).find((r) => !isSummaryRequest(r.body))!.body.messages as Array<{ role: string; content: string }>;
    expect(sent.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'The cat is named Pixel.' }, { role: 'assistant', content: 'Noted.' }, { role: 'user', content: 'what is my cat called?' },
    ]);
    expect((await b().listMessages(id)).data.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
  });

  it('refuses a bad exchange with 400 and stores nothing; an unknown entity is 404', async () => {
    const id = await entity();
    for (const bad of [{ content: 'hi' }, { content: '', reply: 'x' }, { content: 'hi', reply: '  ' }, { content: 1, reply: 'x' }, { content: 'hi', reply: 'x', role: 'user' }]) {
      await expect(b().appendExchange(id, bad as never)).rejects.toBeInstanceOf(BadRequestError);
    }
    await expect(b().appendExchange(id, { content: 'word '.repeat(300), reply: 'ok' })).rejects.toThrow(/larger than the window budget of 200 tokens/);
    expect((await b().getEntity(id)).transcript.messages).toBe(0);
    await expect(b().appendExchange('00000000-0000-4000-8000-000000000000', { content: 'a', reply: 'b' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('waits for no turn: 409 while one holds the lease, and the turn commits whole', async () => {
    const id = await entity();
    ctx.fake.script({ text: ['slow', ' reply'], chunkDelayMs: 300 });
    const asked = ctx.fake.requests.length;
    const turn = collect(b().sendMessage(id, { content: 'take your time' }));
    while (ctx.fake.requests.length === asked) await new Promise((r) => setTimeout(r, 10));
    await expect(b().appendExchange(id, { content: 'meanwhile', reply: 'ok' })).rejects.toBeInstanceOf(ConflictError);
    await turn;
    expect((await b().listMessages(id)).data.map((m) => m.content)).toEqual(['take your time', 'slow reply']);
  });

  it('over the window budget, the next turn rotates; at the transcript cap it is read-only (409)', async () => {
    const id = await entity();
    for (let i = 0; i < 4; i++) await b().appendExchange(id, { content: `fact ${i}: ${'lorem ipsum '.repeat(30)}`, reply: 'Noted.' });
    expect((await b().getWindow(id)).tokens).toBeGreaterThan(200);
    await collect(b().sendMessage(id, { content: 'go on' }));
    const w = await b().getWindow(id);
    expect(w.blocks[0]!.kind).toBe('summary');
    expect(w.tokens).toBeLessThanOrEqual(200);
    let refused: unknown;
    for (let i = 0; i < 40 && !refused; i++) refused = await b().appendExchange(id, { content: 'filler '.repeat(90), reply: 'ok' }).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).code).toBe('read_only');
  });

  it('recall finds what the transcript holds within max_tokens, and refuses the same bad input on every backend', async () => {
    const id = await entity();
    await b().appendExchange(id, { content: 'My sister teaches violin in Zanzibar.', reply: 'Noted.' });
    for (let i = 0; i < 5; i++) await b().appendExchange(id, { content: `the harbour had fog on day ${i}`, reply: 'ok' });
    const r = await b().recall(id, { q: 'where does my sister teach', max_tokens: 60 });
    expect(r).toMatchObject({ object: 'entity.recall', entity_id: id });
    expect(r.text).toMatch(/^#1 user \(.*\): My sister teaches violin in Zanzibar\.$/m);
    expect(r.tokens).toBeLessThanOrEqual(60);
    expect((await loadTokenEstimator()).count(r.text)).toBeLessThanOrEqual(60);
    // Which messages, not their text a second time (the text is in `text`, within max_tokens).
    expect(r.messages.length).toBeGreaterThan(0);
    for (const m of r.messages) expect(Object.keys(m).sort()).toEqual(['role', 'seq', 'tokens']);
    expect((await b().recall(id, { q: 'quantum chromodynamics' })).text).toBe('');
    for (const bad of [{ q: '' }, { q: 'x', max_tokens: 0 }, { q: 'x', max_tokens: 20_001 }, { q: 'x'.repeat(1001) }]) {
      await expect(b().recall(id, bad)).rejects.toBeInstanceOf(BadRequestError);
    }
  });
});
