import { afterAll, describe, expect, it } from 'vitest';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { retrieve } from '../../src/engine/entities/retrieve.js';
import { VersionedCache } from '../../src/engine/support/versioned-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { EntityRow } from '../../src/store/types.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

/** The retriever on a real SQLite file: how it ranks, what it brings around a hit, how it fills its budget. */
const engine = makeEngine(tempDir());
afterAll(() => engine.close());
const deps = { store: engine.store };
const tok = await loadTokenEstimator();

/** An entity whose transcript is `contents` (seq 1 first), written straight to the store; dated a day apart. */
async function entityWith(contents: string[]): Promise<EntityRow> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'auto' }, 'local');
  const repos = (engine.store as SqliteStore).repos;
  let tokens = 0;
  repos.transaction(() => {
    contents.forEach((content, i) => {
      const t = tok.count(content);
      tokens += t;
      repos.entities.insertMessage(e.id, { seq: i + 1, role: i % 2 ? 'assistant' : 'user', content, tokens: t, createdAt: new Date(Date.UTC(2023, 4, 1 + i, 18, 30)).toISOString() });
    });
  });
  const row = (await engine.store.entities.get('local', e.id))!;
  return { ...row, transcriptMessages: contents.length, transcriptTokens: tokens };
}

const filler = (i: number) => ['the weather was grey', 'we spoke of trains', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'][i % 5]!;
const seqs = (r: { messages: { seq: number }[] }) => r.messages.map((m) => m.seq);

describe('retrieve', () => {
  it("ranks with the entity's own statistics: another entity using the question's word a thousand times changes nothing", async () => {
    const mine = await entityWith(['I keep a jar of sea glass from the lighthouse beach', ...Array.from({ length: 20 }, (_, i) => filler(i))]);
    await entityWith(Array.from({ length: 1200 }, (_, i) => `lighthouse lighthouse ${i}`));
    const found = await retrieve(deps, mine, 'what did I collect at the lighthouse?', { budgetTokens: 200 });
    expect(seqs(found)).toContain(1);
  });

  it('brings the message after a hit and the one before it, whichever side spoke, in seq order and never from the live window', async () => {
    const e = await entityWith([filler(0), filler(1), filler(2), 'Caroline: we finally decided to adopt', 'Melanie: you will be an awesome mom', filler(3), filler(4), 'we talked about adopt papers again', 'the live window starts here']);
    const found = await retrieve(deps, e, 'What does Melanie think about the decision to adopt?', { budgetTokens: 400, beforeSeq: 9 });
    // Hits 4, 5 (Melanie) and 8, each with up to two messages either side; 9 is in view.
    expect(seqs(found)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(found.text.split('\n')[2]).toBe('#4 assistant (2023-05-04 18:30): Caroline: we finally decided to adopt');
  });

  it('fills a larger budget with more hits, and keeps weaker hits for room the strong ones leave', async () => {
    const contents = Array.from({ length: 400 }, (_, i) => (i % 10 === 0 ? `the heron was at the pond again, note ${i}` : `${filler(i)} today, item ${i}`));
    contents[200] = 'the heron built a nest of reeds at the old mill pond, by the heron hide';
    const e = await entityWith(contents);
    const small = await retrieve(deps, e, 'where did the heron build its nest?', { budgetTokens: 300 });
    const large = await retrieve(deps, e, 'where did the heron build its nest?', { budgetTokens: 2000 });
    expect(seqs(small)).toContain(201);
    // Forty messages match "heron" alone, far below the nest's score: with room they are recalled too.
    expect(large.messages.length).toBeGreaterThan(60);
    expect(large.tokens).toBeLessThanOrEqual(2000);
    expect(large.tokens).toBeGreaterThan(1800);
    expect(tok.count(large.text) + large.messages.length - 1).toBeLessThanOrEqual(2000);
  });

  it('finds other forms of the words: an irregular form, a derivation, a compound written apart', async () => {
    const e = await entityWith(['I drew a portrait of Grandpa Ruben', filler(1), 'Mrs. Adebayo mentored me at the bakery', filler(3), 'we are doing a road trip to Big Sur', filler(5), filler(6)]);
    expect(seqs(await retrieve(deps, e, 'What was I drawing?', { budgetTokens: 30 }))).toContain(1);
    expect(seqs(await retrieve(deps, e, 'Who gave me mentorship?', { budgetTokens: 30 }))).toContain(3);
    expect(seqs(await retrieve(deps, e, 'Where is the roadtrip?', { budgetTokens: 30 }))).toContain(5);
  });

  it('a question with no content words, or words no message has, recalls nothing', async () => {
    const e = await entityWith([filler(0), filler(1), filler(2)]);
    expect(await retrieve(deps, e, 'what do you think?', { budgetTokens: 500 })).toEqual({ text: '', tokens: 0, messages: [] });
    expect(await retrieve(deps, e, 'astronomy telescopes', { budgetTokens: 500 })).toEqual({ text: '', tokens: 0, messages: [] });
  });

  it('keeps a term\'s matches before a window for the next turns, only when asked, and not for another transcript under the same id', async () => {
    const e = await entityWith(['the heron nested by the mill', filler(1), filler(2), filler(3), 'the heron came back', filler(5)]);
    const asked: string[][][] = [];
    const store = { ...engine.store, entities: Object.assign(Object.create(engine.store.entities), {
      termMatches: (q: Parameters<typeof engine.store.entities.termMatches>[0]) => (asked.push(q.terms), engine.store.entities.termMatches(q)),
    }) };
    const kept = { store, termMatches: new VersionedCache<never>(16) } as unknown as Parameters<typeof retrieve>[0];
    const first = await retrieve(kept, e, 'where did the heron nest?', { beforeSeq: 6, budgetTokens: 200, keep: true });
    expect(seqs(first)).toContain(1);
    expect(asked.length).toBe(1);
    // The same words before the same seq: read from what was kept, with the same result.
    expect(await retrieve(kept, e, 'where did the heron nest?', { beforeSeq: 6, budgetTokens: 200, keep: true })).toEqual(first);
    expect(asked.length).toBe(1);
    // A new word is read, the kept ones are not.
    await retrieve(kept, e, 'where did the heron nest by the mill?', { beforeSeq: 6, budgetTokens: 200, keep: true });
    expect(asked[1]!.flat()).toContain('mill');
    expect(asked[1]!.flat()).not.toContain('heron');
    // Another window start, a call that does not ask to keep, and another transcript under the id read again.
    await retrieve(kept, e, 'where did the heron nest?', { beforeSeq: 5, budgetTokens: 200, keep: true });
    await retrieve(kept, e, 'where did the heron nest?', { beforeSeq: 6, budgetTokens: 200 });
    await retrieve(kept, { ...e, createdAt: '2030-01-01T00:00:00.000Z' }, 'where did the heron nest?', { beforeSeq: 6, budgetTokens: 200, keep: true });
    expect(asked.length).toBe(5);
  });
});
