import { randomUUID } from 'node:crypto';
import { loadTokenEstimator } from '../src/core/text/tokens.js';
import type { Engine } from '../src/engine/engine.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const LINES = [
  'We talked about the garden again, the tomatoes, and whether the fence should be painted green before winter.',
  'I remember you said the lighthouse keeper kept a journal of every ship that passed; did he ever write about storms?',
  'Let us plan the week: Monday the market, Tuesday the library, Wednesday a long walk by the river with the dog.',
  'The recipe needs two eggs, a cup of flour, a pinch of salt, and patience while the dough rests in a warm place.',
];

/**
 * Gives an entity a transcript of `messages` messages (about `tokensPerMessage` each) and a
 * window in a rotated state: one summary over the old part, then the recent messages. Written
 * straight through the store in one transaction: seeding by running turns would take minutes.
 */
export async function seedTranscript(engine: Engine, entityId: string, messages: number, tokensPerMessage: number, liveMessages = 20, plant?: { every: number; line: string }) {
  const tok = await loadTokenEstimator();
  const contents = LINES.map((l) => {
    let s = l;
    while (tok.count(s) < tokensPerMessage) s += ' ' + l;
    return tok.truncate(s, tokensPerMessage);
  });
  const counts = contents.map((c) => tok.count(c));
  // Straight into the file: the bench runs on SQLite.
  if (!(engine.store instanceof SqliteStore)) throw new Error('the bench seeds a SQLite store');
  const store = engine.store.repos;
  const e = store.entities.get('local', entityId)!;
  const now = new Date().toISOString();
  let transcriptTokens = 0;
  let windowTokens = 0;
  const firstLive = Math.max(1, messages - liveMessages + 1);
  store.transaction(() => {
    let position = 1;
    if (firstLive > 1) {
      const summary = tok.truncate(contents.join(' '), 200);
      store.entities.insertBlock(entityId, {
        id: randomUUID(), position: position++, kind: 'summary', role: 'system', content: summary,
        tokens: tok.count(summary), coversFrom: 1, coversTo: firstLive - 1,
      });
      windowTokens += tok.count(summary);
    }
    for (let seq = 1; seq <= messages; seq++) {
      const i = seq % contents.length;
      const role = seq % 2 === 1 ? 'user' : 'assistant';
      // A rarer line now and then (a fact a later question asks about), in place of the cycled one.
      const planted = plant && seq % plant.every === 0 && seq < firstLive ? `${plant.line} (${seq})` : undefined;
      const content = planted ?? contents[i];
      const tokens = planted ? tok.count(planted) : counts[i];
      store.entities.insertMessage(entityId, { seq, role, content, tokens, createdAt: now });
      transcriptTokens += tokens;
      if (seq >= firstLive) {
        store.entities.insertBlock(entityId, {
          id: randomUUID(), position: position++, kind: 'message', role, content: contents[i],
          tokens: counts[i], coversFrom: seq, coversTo: seq,
        });
        windowTokens += counts[i];
      }
    }
    store.entities.updateCounters(entityId, {
      transcriptMessages: messages,
      transcriptTokens,
      windowTokens,
      windowBlocks: Math.min(messages, liveMessages) + (firstLive > 1 ? 1 : 0),
      updatedAt: now,
    });
  });
  return { transcriptTokens, capTokens: e.capTokens };
}
