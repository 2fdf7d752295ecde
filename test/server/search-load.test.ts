import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import type { MessageRow } from '../../src/store/types.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';
import { MANY_PREFIXES, largeMessage } from '../helpers/search-corpus.js';

// Issue 31, finding 4: a search's snippets were built over each hit's whole text on the event
// loop, so a few large hits and a query of many prefixes held /healthz for seconds.
const dir = tempDir();
let engine: Engine;
let server: Listening;
let key: string;


beforeAll(async () => {
  engine = makeEngine(dir);
  key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
  const accountId = (await engine.accounts.find('local')).id;
  const at = new Date().toISOString();
  const messages: MessageRow[] = Array.from({ length: 6 }, (_, i) => ({ seq: i + 1, role: i % 2 ? 'assistant' : 'user', content: largeMessage(i), tokens: 100_000, createdAt: at }));
  await engine.store.entities.importEntity({
    entity: {
      id: randomUUID(), accountId, name: 'large', instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none',
      budgetTokens: 32_000, capTokens: 10_000_000, transcriptMessages: 6, transcriptTokens: 600_000, windowTokens: 0, windowBlocks: 0, createdAt: at, updatedAt: at,
    },
    messages, blocks: [], keepIds: true,
  });
  server = await listen(engine, '127.0.0.1', 0);
});
afterAll(async () => {
  await server.close();
  engine.close();
});

async function search(q: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/v1/search?q=${encodeURIComponent(q)}&limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

/** /healthz on a connection of its own, kept open: the wait measured is the server's, not a new connection's. */
const probe = new Agent({ connections: 1 });
async function healthz(): Promise<void> {
  const res = await fetch(`${server.url}/healthz`, { dispatcher: probe } as RequestInit);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('search under load', () => {
  // The wait itself is measured by `npm run bench -- --only=search` (it held under 100 ms, but not
  // on a machine with every core busy); this checks the behaviour behind it: each hit's snippet
  // is cut from a window of its text, and other requests are answered between searches.
  it('answers /healthz between 10 concurrent searches over 0.4 MB hits (a 250-prefix query and a one-word query), not after them all', async () => {
    expect(MANY_PREFIXES.length).toBeLessThan(1000);
    await healthz();
    // What the process tokenizes (a snippet's words, a query's): never a hit's whole text.
    const tokenized: number[] = [];
    const matchAll = String.prototype.matchAll;
    const spy = vi.spyOn(String.prototype, 'matchAll').mockImplementation(function (this: string, re: RegExp) {
      tokenized.push(this.length);
      return matchAll.call(this, re);
    });
    let finished = 0;
    const searches = Array.from({ length: 10 }, (_, i) => search(i % 2 ? MANY_PREFIXES : 'harbour').then((r) => (finished++, r)));
    let answeredDuring = 0;
    while (finished < searches.length) {
      await healthz();
      if (finished < searches.length) answeredDuring++;
    }
    const results = await Promise.all(searches).finally(() => spy.mockRestore());
    expect(Math.max(...tokenized)).toBeLessThanOrEqual(1000);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(6);
      for (const hit of r.body.data) {
        expect(hit.snippet.length).toBeLessThanOrEqual(164);
        expect(hit.highlights.length).toBeGreaterThan(0);
      }
    }
    // One statement and its snippets at a time, each in a turn of the event loop of its own.
    expect(answeredDuring).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
