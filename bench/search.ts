// Search (issue 22): latency over 1,000,000 transcript tokens in 100 entities on both stores, the
// index's size against the text it covers, and what keeping the index costs a turn.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { loadTokenEstimator } from '../src/core/text/tokens.js';
import { openEngine } from '../src/engine/open-engine.js';
import type { Engine } from '../src/engine/engine.js';
import type { EntityRow, MessageRow } from '../src/store/types.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { startPostgres } from '../test/helpers/postgres.js';

export interface SearchBench {
  store: 'sqlite' | 'postgres';
  messages: number;
  tokens: number;
  /** Medians of the engine's search (the store's query and the snippets), for queries of three kinds. */
  /** A word in about 2% of the messages. */
  wordMs: number;
  /** A word in nearly every message. */
  commonMs: number;
  rareMs: number;
  phraseMs: number;
  prefixMs: number;
  /** The index against the text it covers. */
  indexBytes: number;
  textBytes: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/**
 * A deterministic corpus: words drawn Zipf-like (rank r with odds 1/r) from 4,000 made-up words,
 * one rare word planted once. `words.typical` (rank 300) is in about 2% of messages, `words.common`
 * (rank 1) in nearly all: the worst case, a search for "the".
 */
function corpus(entities: number, perEntity: number, wordsPerMessage: number): { texts: string[][]; words: { typical: string; common: string } } {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'ta', 'vo', 'shi', 'an', 'ber', 'tul', 'or', 'ne', 'qua', 'dis', 'pel'];
  const vocab = Array.from({ length: 4000 }, (_, i) => syllables[i % 15] + syllables[Math.floor(i / 15) % 15] + (i >= 225 ? syllables[Math.floor(i / 225) % 15] : ''));
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const word = () => vocab[Math.min(vocab.length - 1, Math.floor(Math.exp(rand() * Math.log(vocab.length))) - 1)]!;
  const out = Array.from({ length: entities }, () => Array.from({ length: perEntity }, () => Array.from({ length: wordsPerMessage }, word).join(' ') + '.'));
  out[37]![12] = `The secret word is zanzibar42. ${out[37]![12]}`;
  return { texts: out, words: { typical: vocab[300]!, common: vocab[0]! } };
}

function entityRow(id: string, messages: MessageRow[]): EntityRow {
  const at = new Date().toISOString();
  const tokens = messages.reduce((n, m) => n + m.tokens, 0);
  return {
    id, accountId: 'local', name: `bench-${id.slice(0, 4)}`, instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none',
    budgetTokens: 32_000, capTokens: 10_000_000, transcriptMessages: messages.length, transcriptTokens: tokens, windowTokens: 0, windowBlocks: 0, createdAt: at, updatedAt: at,
  };
}

async function seed(engine: Engine, texts: string[][]): Promise<{ messages: number; tokens: number; textBytes: number }> {
  const tok = await loadTokenEstimator();
  let messages = 0;
  let tokens = 0;
  let textBytes = 0;
  for (const entity of texts) {
    const rows: MessageRow[] = entity.map((content, i) => ({ seq: i + 1, role: i % 2 ? 'assistant' : 'user', content, tokens: tok.count(content), createdAt: new Date(Date.now() - (entity.length - i) * 60_000).toISOString() }));
    await engine.store.entities.importEntity({ entity: entityRow(randomUUID(), rows), messages: rows, blocks: [], keepIds: true });
    messages += rows.length;
    tokens += rows.reduce((n, m) => n + m.tokens, 0);
    textBytes += rows.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
  }
  return { messages, tokens, textBytes };
}

async function timeQueries(engine: Engine, q: string, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    const t0 = performance.now();
    const r = await engine.search({ q }, 'local');
    if (i >= 5) times.push(performance.now() - t0);
    if (r.data.length === 0) throw new Error(`the bench query ${q} found nothing`);
  }
  return median(times);
}

async function measure(engine: Engine, store: SearchBench['store'], indexBytes: () => Promise<number>, runs: number): Promise<SearchBench> {
  // 100 entities x 100 messages x ~100 tokens: 1,000,000 tokens.
  const { texts, words } = corpus(100, 100, 50);
  const seeded = await seed(engine, texts);
  const time = (q: string) => timeQueries(engine, q, runs);
  const [word, common, rare, phrase, prefix] = [await time(words.typical), await time(words.common), await time('zanzibar42'), await time('"secret word"'), await time('tul*')];
  return { store, ...seeded, wordMs: word, commonMs: common, rareMs: rare, phraseMs: phrase, prefixMs: prefix, indexBytes: await indexBytes() };
}

/** Both stores (PostgreSQL when it can be started here); null rows are stores that could not run. */
export async function benchSearch(work: string, runs: number): Promise<SearchBench[]> {
  const out: SearchBench[] = [];
  const sqlite = await openEngine({ db: join(work, 'search.db') });
  const db = (sqlite.store as SqliteStore).db;
  out.push(await measure(sqlite, 'sqlite', async () => sqliteIndexBytes(db), runs));
  await sqlite.close();
  const cluster = await startPostgres('the search bench on PostgreSQL');
  if (!cluster) return out;
  try {
    const url = await cluster.createDatabase('search_bench');
    const pg = await openEngine({ db: url });
    out.push(await measure(pg, 'postgres', () => pgIndexBytes(pg.store as PostgresStore), runs));
    await pg.close();
  } finally {
    await cluster.stop();
  }
  return out;
}

/** The FTS5 index's own pages (its shadow tables), from SQLite's dbstat. */
function sqliteIndexBytes(db: SqliteStore['db']): number {
  const row = db.prepare(`SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE 'messages_search%'`).get() as { bytes: number };
  return row.bytes;
}

/** The GIN index and the tsvector column it indexes. */
async function pgIndexBytes(store: PostgresStore): Promise<number> {
  const r = await store.pool.query<{ bytes: string }>(
    `SELECT pg_relation_size('messages_search') + (SELECT COALESCE(SUM(pg_column_size(search)), 0) FROM messages) AS bytes`,
  );
  return Number(r.rows[0]!.bytes);
}

/**
 * What keeping the index costs a turn: the same turns on two entities with `messages` messages
 * each, in two files, interleaved; one file has its index removed (its triggers and FTS table
 * dropped: the turn's work as it was before search). Returns the medians.
 */
export async function benchIndexCost(work: string, messages: number, turns: number, seedTranscript: (engine: Engine, id: string, messages: number, tokens: number) => Promise<unknown>): Promise<{ withIndex: number; without: number }> {
  const engines: Engine[] = [];
  const ids: string[] = [];
  for (const name of ['indexed', 'bare']) {
    const engine = await openEngine({ db: join(work, `index-cost-${name}-${messages}.db`) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'You are a benchmark.' }, 'local');
    await seedTranscript(engine, e.id, messages, 40);
    engines.push(engine);
    ids.push(e.id);
  }
  (engines[1]!.store as SqliteStore).db.exec(
    `DROP TRIGGER messages_search_insert; DROP TRIGGER messages_search_delete; DROP TRIGGER messages_search_update; DROP TABLE messages_search;`,
  );
  const times: number[][] = [[], []];
  for (let i = 0; i < turns + 20; i++) {
    for (const k of [0, 1]) {
      const t0 = performance.now();
      for await (const _ of engines[k]!.entities.send(ids[k]!, { content: `turn ${i}: how are the tomatoes doing this week?` }, 'local'));
      if (i >= 20) times[k]!.push(performance.now() - t0);
    }
  }
  for (const e of engines) await e.close();
  return { withIndex: median(times[0]!), without: median(times[1]!) };
}
