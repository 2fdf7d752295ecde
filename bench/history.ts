// The window history (issue 33): what recording every rotation and every turn's window costs in
// database size over 10,000 turns, and how fast `window --at` rebuilds a past turn's prompt.
import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openEngineSync } from '../src/engine/open-engine.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

export interface HistoryRun {
  turns: number;
  rotations: number;
  /** The database after the turns, and the same database with the history tables emptied (both vacuumed). */
  bytesWith: number;
  bytesWithout: number;
  /** `window --at` (the engine call) over random turns, in ms. */
  atMs: number[];
}

const WORDS = (
  'the ledger cargo hold voyage harbour captain noted that we should keep a careful account of every crate ' +
  'barrel and coin which came aboard at the port before the storm and after it cleared so nothing is lost'
).split(' ');

/** A deterministic chat message of 20-120 words, so runs compare. */
function messages(seed: number): () => string {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  return () => Array.from({ length: 20 + Math.floor(next() * 101) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

/** The file's size once the WAL is folded in and free pages are dropped. */
function vacuumedSize(path: string, emptyHistory: boolean): number {
  const db = new Database(path);
  if (emptyHistory) db.exec('DELETE FROM turn_windows; DELETE FROM rotations; DELETE FROM prompt_heads;');
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return statSync(path).size;
}

export async function benchHistory(work: string, turns: number, samples: number): Promise<HistoryRun> {
  const path = join(work, 'history.db');
  // The default budget (32,000 tokens) and the echo provider: rotations as a long conversation has them.
  const engine = openEngineSync({ db: path, route: () => ({ provider: 'echo' }), transcriptCap: 10_000_000 });
  const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ledger', instructions: 'You keep the ship\'s ledger. Be exact.' }, 'local');
  const next = messages(33);
  for (let i = 0; i < turns; i++) {
    for await (const _ of engine.entities.send(id, { content: next() }, 'local'));
  }
  const rotations = (await engine.entities.rotations(id, 'local')).rotations.length;
  const atMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const seq = 2 * Math.floor(Math.random() * turns) + 1;
    const t0 = performance.now();
    await engine.entities.windowAt(id, String(seq), 'local');
    atMs.push(performance.now() - t0);
  }
  await (engine.store as SqliteStore).checkpoint();
  engine.close();
  const floor = join(work, 'history-emptied.db');
  copyFileSync(path, floor);
  return { turns, rotations, bytesWith: vacuumedSize(path, false), bytesWithout: vacuumedSize(floor, true), atMs };
}
