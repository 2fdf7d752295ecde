// Semantic recall: what ranking by meaning costs over an entity at the transcript cap (20,000
// messages of 40 tokens, 800k tokens), brute force: every vector read from the store and compared.
// The embeddings come from the fake provider over loopback (a vector per text, of a real model's
// width), so this measures mgpt's part: the question's request, the read, the cosines, the fusion.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openEngineSync } from '../src/engine/open-engine.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { seedTranscript } from './seed.js';

export interface SemanticRun {
  messages: number;
  dims: number;
  /** A recall (GET …/recall) ranked by words alone, and by words fused with the meaning ranking, in ms. */
  wordsMs: number[];
  fusedMs: number[];
  /** Of a fused recall: the store's read of every vector and the cosines, in ms. */
  rankMs: number[];
  /** What the vectors add to the database file, in bytes per message. */
  bytesPerMessage: number;
}

/** A deterministic vector of `dims` floats for a text. */
function vectorOf(text: string, dims: number): number[] {
  let s = 0;
  for (let i = 0; i < text.length; i++) s = (s * 31 + text.charCodeAt(i)) | 0;
  return Array.from({ length: dims }, () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) - 0.5);
}

export async function benchSemantic(work: string, messages: number, dims: number, runs: number): Promise<SemanticRun> {
  const fake = await startFakeOpenAI();
  let n = 0;
  fake.embed = (text) => vectorOf(`${text}${n++}`, dims);
  const db = join(work, 'semantic.db');
  const route = { provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 };
  const engine = openEngineSync({ db, route: () => ({ ...route, embeddings: { model: 'bench-embed' } }) });
  const words = openEngineSync({ db, route: () => route });
  try {
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await seedTranscript(engine, e.id, messages, 40);
    const before = sizeOf(engine.store, db);
    // Embed the whole transcript: each recall starts a pass of 256, so run passes until none is left.
    const row = (await engine.store.entities.get('local', e.id))!;
    while ((await engine.store.vectors.unembedded(e.id, 'bench-embed', 1)).length) {
      engine.deps.semantic.refresh(row);
      await engine.deps.semantic.drain();
    }
    const bytesPerMessage = (sizeOf(engine.store, db) - before) / messages;
    const q = { q: 'what did we plan for the walk by the river with the dog?' };
    const wordsMs: number[] = [];
    const fusedMs: number[] = [];
    const rankMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      let t0 = performance.now();
      await words.entities.recall(e.id, q, 'local');
      wordsMs.push(performance.now() - t0);
      t0 = performance.now();
      await engine.entities.recall(e.id, q, 'local');
      fusedMs.push(performance.now() - t0);
      t0 = performance.now();
      await engine.deps.semantic.rank(row, q.q, undefined, 5);
      rankMs.push(performance.now() - t0);
    }
    return { messages, dims, wordsMs, fusedMs, rankMs, bytesPerMessage };
  } finally {
    await engine.close();
    await words.close();
    await fake.close();
  }
}

function sizeOf(store: unknown, db: string): number {
  if (store instanceof SqliteStore) store.db.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(db).size;
}
