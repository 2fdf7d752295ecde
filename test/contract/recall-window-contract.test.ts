import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import type { TurnEvent, UpdateEntityInput } from '../../src/core/wire/entity-types.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { pinnedMemoryText } from '../../src/core/wire/memory.js';
import { echoLastUser, isSummaryRequest } from '../helpers/fake-openai.js';
import { collect, contractTargets, useContractTarget } from './targets.js';

// Recall's bound per entity and what the next request is made of, through the Backend interface:
// the local backend, the remote one against mgpt serve, and two serve replicas on PostgreSQL.

const done = (events: TurnEvent[]) => events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;

const targets = await contractTargets('the recall bound and window parts contract');

/** A fact long enough (about 90 tokens) that recalling it whole, with its reply, takes more than the bounds below. */
const FACT =
  'My grandmother Rosalind grew seventeen kinds of heirloom tomatoes in her greenhouse near the old harbour, ' +
  'including Brandywine, Cherokee Purple, Green Zebra, Black Krim, Mortgage Lifter, San Marzano and Yellow Pear, ' +
  'and she kept a notebook of every seed she saved, sorted by the colour of the fruit and the year she first planted it.';

describe.each(targets)('recall bound and window parts contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-recall-window', name, make);
  const b = () => ctx.t.backend;
  const send = async (id: string, content: string) => collect(b().sendMessage(id, { content }));
  /** An entity whose first exchange (the fact) the window (budget 300) has folded away. */
  const folded = async (recall: Pick<UpdateEntityInput, 'recall' | 'recall_tokens'>) => {
    // Seeded with recall off (the scripted model echoes the whole user message, recall and all), then turned on.
    const id = (await b().createEntity({ model: 'mgpt-1-27b', recall: 'off' })).id;
    await b().updateEntity(id, { budget_tokens: 300 });
    await send(id, FACT);
    for (let i = 0; i < 20; i++) await send(id, `turn ${i}: a few words about the weather`);
    expect((await b().getWindow(id)).blocks.some((x) => x.kind === 'message' && x.covers[0] <= 2)).toBe(false);
    await b().updateEntity(id, recall);
    return id;
  };

  it('recall_tokens: set on create and update, shown beside recall, defaulting to the smaller of engine.recallTokens and half the budget', async () => {
    // The contract's engine has a 200-token budget and the default engine.recallTokens (1,000).
    const plain = await b().createEntity({ model: 'mgpt-1-27b', recall: 'auto' });
    expect(plain.recall_tokens).toBe(100);
    const set = await b().createEntity({ model: 'mgpt-1-27b', recall: 'auto', recall_tokens: 40 });
    expect(set.recall_tokens).toBe(40);
    expect((await b().getEntity(set.id)).recall_tokens).toBe(40);
    expect((await b().listEntities()).data.find((e) => e.id === set.id)?.recall_tokens).toBe(40);
    expect((await b().updateEntity(set.id, { recall_tokens: 70 })).recall_tokens).toBe(70);
    // A larger budget and bound in one update; a budget lowered later lowers the bound in effect.
    expect((await b().updateEntity(set.id, { budget_tokens: 600, recall_tokens: 250 })).recall_tokens).toBe(250);
    expect((await b().updateEntity(set.id, { budget_tokens: 300 })).recall_tokens).toBe(150);
    expect((await b().updateEntity(set.id, { budget_tokens: 1000 })).recall_tokens).toBe(250);
    // Off and never set: nothing to show.
    expect((await b().createEntity({ model: 'mgpt-1-27b', recall: 'off' })).recall_tokens).toBeUndefined();
  });

  it('a bad recall_tokens is a 400 with the range, on create and update, and changes nothing', async () => {
    const before = (await b().listEntities()).data.length;
    for (const bad of [0, -5, 101, 2.5, '50', null]) {
      await expect(b().createEntity({ model: 'mgpt-1-27b', recall_tokens: bad as never })).rejects.toMatchObject({
        message: `recall_tokens must be an integer from 1 to 100 (half of budget_tokens 200), got ${typeof bad === 'number' ? bad : JSON.stringify(bad)}`,
      });
    }
    expect((await b().listEntities()).data.length).toBe(before);
    const id = (await b().createEntity({ model: 'mgpt-1-27b', recall: 'auto', recall_tokens: 30 })).id;
    await expect(b().updateEntity(id, { recall_tokens: 101 })).rejects.toBeInstanceOf(BadRequestError);
    // Checked against the budget the same update sets: 60 is over half of 100, and neither is applied.
    await expect(b().updateEntity(id, { budget_tokens: 100, recall_tokens: 60 })).rejects.toMatchObject({ message: /from 1 to 50 \(half of budget_tokens 100\), got 60$/ });
    const after = await b().getEntity(id);
    expect([after.window.budget_tokens, after.recall_tokens]).toEqual([200, 30]);
  });

  it('automatic recall never passes the bound: the default (half the budget) and one set lower; the reply carries each line\'s text', async () => {
    const tok = await loadTokenEstimator();
    for (const [bound, extra] of [[150, {}], [40, { recall_tokens: 40 }]] as const) {
      const id = await folded({ recall: 'auto', ...extra });
      const events = await send(id, 'How many heirloom tomato kinds did grandmother Rosalind grow in her greenhouse?');
      const recalled = done(events).completion.recalled!;
      expect(recalled.map((m) => m.seq)).toContain(1);
      expect(recalled.reduce((n, m) => n + m.tokens, 0)).toBeLessThanOrEqual(bound);
      // The text as the prompt carried it: a prefix of the message (cut by the bound), and in the request.
      const prompt = ctx.fake.requests.at(-1)!.body.messages as Array<{ content: string }>;
      const sent = prompt.map((m) => m.content).join('\n');
      for (const m of recalled) {
        expect(m.content!.length).toBeGreaterThan(0);
        expect(sent).toContain(`#${m.seq} ${m.role} (`);
        expect(sent).toContain(m.content);
      }
      expect(FACT.startsWith(recalled.find((m) => m.seq === 1)!.content!)).toBe(true);
      // Whole, the fact and its reply (as the scripted model echoed it) are over either bound: the bound held them back.
      const whole = tok.count(`#1 user (2026-11-27 10:00): ${FACT}`) + tok.count(`#2 assistant (2026-11-27 10:00): reply: ${FACT}`) + 2;
      expect(whole).toBeGreaterThan(bound);
    }
  });

  it('the recall tool never passes the bound over all its rounds, and says so when it is used up', async () => {
    const tok = await loadTokenEstimator();
    const id = await folded({ recall: 'tool', recall_tokens: 30 });
    const bodies: any[] = [];
    let round = 0;
    ctx.fake.fallback = (body) => {
      if (isSummaryRequest(body)) return echoLastUser(body);
      bodies.push(body);
      round++;
      return round <= 3 ? { toolCalls: [{ id: `r${round}`, name: 'recall', arguments: '{"query":"heirloom tomatoes greenhouse Rosalind"}' }] } : { text: 'Seventeen.' };
    };
    await send(id, 'What did grandmother grow?').finally(() => (ctx.fake.fallback = echoLastUser));
    const tools = (bodies.at(-1).messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(3);
    expect(tools[0].content).toMatch(/^#1 user \(/);
    const found = tools.filter((m) => m.content.startsWith('#'));
    expect(found.reduce((n, m) => n + m.content.split('\n').reduce((k, line) => k + tok.count(line) + 1, 0), 0)).toBeLessThanOrEqual(30);
    expect(tools.at(-1)!.content).toBe("not run: this turn's recall already returned its 30 tokens; answer with what you have");
  });

  it('window prompt: every part with its tokens, adding up; its messages are the next request\'s, message for message', async () => {
    const tok = await loadTokenEstimator();
    const id = (await b().createEntity({ model: 'mgpt-1-27b', instructions: 'You are Ada, a patient tutor.', recall: 'off' })).id;
    for (let i = 0; i < 14; i++) await send(id, `turn ${i}: a few words about the mill and the river`);
    await b().setMemory(id, 'user', 'Ada lives in Porto');
    // Room for the next turn, so it does not rotate: the request is then the window's, and the new message.
    await b().updateEntity(id, { budget_tokens: 2000 });
    const w = await b().getWindowPrompt(id);
    const seed = await b().getWindow(id);
    expect({ entity_id: w.entity_id, object: w.object, budget_tokens: w.budget_tokens, tokens: w.tokens, blocks: w.blocks }).toEqual(seed);
    expect(Object.keys(seed)).not.toContain('parts');
    const sum = (kind: string) => seed.blocks.filter((x) => x.kind === kind).reduce((n, x) => n + x.tokens, 0);
    expect(w.parts.instructions).toEqual({ tokens: tok.count('You are Ada, a patient tutor.'), blocks: 1 });
    // Pinned memory as the request carries it: its heading and labels with the text, after the instructions.
    const pinned = pinnedMemoryText((await b().listMemory(id)).memory);
    expect(w.prompt.some((m) => m.role === 'system' && typeof m.content === 'string' && m.content.includes(pinned))).toBe(true);
    expect(w.parts.memory).toEqual({ tokens: tok.count(pinned), blocks: 1 });
    expect(w.parts.summaries.tokens).toBe(sum('summary'));
    expect(w.parts.summaries.blocks).toBeGreaterThan(0);
    expect(w.parts.messages).toEqual({ tokens: sum('message'), blocks: seed.blocks.filter((x) => x.kind === 'message').length });
    expect(w.parts.recalled).toEqual({ tokens: 0, blocks: 0, lines: [] });
    expect(w.prompt_tokens).toBe(w.parts.instructions.tokens + w.parts.memory.tokens + w.parts.summaries.tokens + w.parts.messages.tokens);
    // The next turn sends exactly these messages, then its own (no rotation: one short message).
    const before = ctx.fake.requests.length;
    await send(id, 'and one more');
    const sent = ctx.fake.requests.slice(before).filter((r) => !isSummaryRequest(r.body));
    expect(sent).toHaveLength(1);
    expect(sent[0].body.messages).toEqual([...w.prompt, { role: 'user', content: 'and one more' }]);
  });
});
