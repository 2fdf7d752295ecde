import { afterAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { recallInView } from '../../src/engine/entities/window/recall-in-view.js';
import { RECALL_PREAMBLE } from '../../src/engine/entities/window/recall-block.js';
import { bytes, collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

// The entity's recall bound through export and import, and what a request carries of recalled lines.
const engine = makeEngine(tempDir(), { windowBudget: 300 });
afterAll(() => engine.close());

const FACT = 'My sister Margaret moved to Lisbon in 2019 to teach chemistry at the university by the river Tagus, and she still lives there.';

describe('recall_tokens in an archive', () => {
  it('an export carries the bound it was given, and an import restores it; an archive without one takes the importing engine\'s default', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'bound', recall: 'auto', recall_tokens: 70 }, 'local');
    await collect(engine.entities.send(e.id, { content: 'hello there' }, 'local'));
    const json = JSON.parse((await bytes(await engine.entities.export(e.id, 'json', 'local'))).toString());
    expect(json.manifest.entity.recall_tokens).toBe(70);
    const tar = await bytes(await engine.entities.export(e.id, 'tar', 'local'));
    expect((await engine.entities.import(tar, 'tar', {}, 'local')).recall_tokens).toBe(70);
    expect((await engine.entities.import(Buffer.from(JSON.stringify(json)), 'json', {}, 'local')).recall_tokens).toBe(70);
    // An archive from before the bound: the default, the smaller of engine.recallTokens (1,000) and half the budget.
    delete json.manifest.entity.recall_tokens;
    const old = await engine.entities.import(Buffer.from(JSON.stringify(json)), 'json', {}, 'local');
    expect(old.recall_tokens).toBe(150);
    // Exported again, it still has no bound of its own: the default follows the engine and the budget.
    const again = JSON.parse((await bytes(await engine.entities.export(old.id, 'json', 'local'))).toString());
    expect(again.manifest.entity.recall_tokens).toBeUndefined();
  });

  it('an archive with a bound the rules refuse is a 400 naming it, and imports nothing', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto', recall_tokens: 20 }, 'local');
    const json = JSON.parse((await bytes(await engine.entities.export(e.id, 'json', 'local'))).toString());
    const count = () => sqliteOf(engine).db.prepare('SELECT count(*) AS n FROM entities').get();
    const before = count();
    for (const bad of [0, 151, 'many']) {
      json.manifest.entity.recall_tokens = bad;
      const err = await engine.entities.import(Buffer.from(JSON.stringify(json)), 'json', {}, 'local').catch((x) => x);
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err.message).toBe(`import: manifest entity.recall_tokens must be an integer from 1 to 150 (half of budget_tokens 300), got ${typeof bad === 'number' ? bad : '"many"'}`);
    }
    expect(count()).toEqual(before);
  });
});

describe('recalled lines in a request', () => {
  it('are read from the messages as sent: the turn that recalled shows its lines, seqs, tokens and text, as its completion listed them', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
    await collect(engine.entities.send(e.id, { content: FACT }, 'local'));
    for (let i = 0; i < 20; i++) await collect(engine.entities.send(e.id, { content: `the weather was grey and we walked, day ${i}` }, 'local'));
    const events = await collect(engine.entities.send(e.id, { content: 'Where does my sister Margaret teach chemistry?' }, 'local'));
    const done = events.find((x) => x.type === 'done') as Extract<(typeof events)[number], { type: 'done' }>;
    const recalled = done.completion.recalled!;
    const at = await engine.entities.windowAt(e.id, '43', 'local');
    const seen = await recallInView(engine.deps, e.id, at.prompt);
    // What this turn recalled is among the recall the request carries (earlier turns' still in view
    // included), and the fact is there (its message or the echoed reply, whole or cut to the budget).
    expect(seen.lines).toEqual(expect.arrayContaining(recalled));
    expect(seen.lines.some((l) => l.seq <= 2 && l.content !== undefined && FACT.startsWith(l.content) && l.content.includes('Lisbon'))).toBe(true);
    const tok = await loadTokenEstimator();
    // The recall's tokens are its preambles' and lines', wherever the request puts them.
    const spans = at.prompt
      .map((m) => (typeof m.content === 'string' ? m.content : ''))
      .filter((t) => t.includes(RECALL_PREAMBLE))
      .map((t) => t.slice(t.indexOf(RECALL_PREAMBLE), t.indexOf('\n</recalled>')));
    expect(seen.tokens).toBe(spans.reduce((n, t) => n + tok.count(t), 0));
    // A line of another message's text (a user quoting the form) is not recall unless a preamble leads it.
    expect((await recallInView(engine.deps, e.id, [{ role: 'user', content: `#1 user (2026-11-27 10:00): ${FACT}` }])).lines).toEqual([]);
    // What the next request still carries of it is reported from that request's own messages.
    const next = await engine.entities.windowPrompt(e.id, 'local');
    expect(next.parts.recalled.lines).toEqual((await recallInView(engine.deps, e.id, next.prompt)).lines);
    expect(next.parts.recalled.lines.every((l) => seen.lines.some((r) => r.seq === l.seq) || l.seq > 42)).toBe(true);
  });

  it('are found wherever a message holds them, a line cut in a character included, and end where the transcript says they end', async () => {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
    await collect(engine.entities.send(e.id, { content: FACT }, 'local'));
    const [user, reply] = (await engine.entities.messages(e.id, {}, 'local')).data;
    const head = (m: typeof user) => `#${m.seq} ${m.role} (${m.created_at.slice(0, 16).replace('T', ' ')}): `;
    const cut = FACT.slice(0, 30);
    // Recall inside a user message, before its own text, with delimiters around it; the first line cut mid-character.
    const text = `<recalled>\nEarlier in this conversation (recalled from the transcript; no longer in view):\n${head(user)}${cut}\uFFFD\n${head(reply)}${reply.content}\n</recalled>\n\nWhere is she now?`;
    const seen = await recallInView(engine.deps, e.id, [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: text }]);
    const tok = await loadTokenEstimator();
    expect(seen.lines).toEqual([
      { seq: 1, role: 'user', tokens: tok.count(head(user) + cut) + 1, content: cut },
      // A whole line as recall counts it: its head, and its message's stored count.
      { seq: 2, role: 'assistant', tokens: tok.count(head(reply)) + reply.tokens + 1, content: reply.content },
    ]);
    const span = text.slice(text.indexOf('Earlier'), text.indexOf('\n</recalled>'));
    expect(seen.tokens).toBe(tok.count(span));
  });
});
