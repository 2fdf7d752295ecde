// The floor under a served turn: only the SQL an entity turn runs (the same statements and the
// same transaction pattern as the engine: reads, the lease upsert, the re-reads under the lease,
// the one commit that frees it), with no engine, no provider and no HTTP framework. Run in-process
// (`sqlTurnsPerSecond`) and behind bare node:http (`node --import tsx bench/sql-floor.ts DB`).
import { randomUUID } from 'node:crypto';
// @ts-expect-error: a plain .mjs script without types (it also runs on its own as a child)
import { bareServer, listenAndPrint } from './bare-server.mjs';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

/** One turn's SQL on `entityId`, as runTurn issues it through SqliteStore. */
export async function sqlTurn(store: SqliteStore, entityId: string, content: string): Promise<void> {
  const before = await store.entities.get('local', entityId);
  if (!before) throw new Error('no entity');
  const owner = randomUUID();
  const subject = `entity:${entityId}` as const;
  const holder = await store.leases.acquire({ subject, owner, idempotencyKey: null, contentSha256: null, expiresAt: Date.now() + 30_000 }, Date.now());
  if (holder) throw new Error('lease held');
  const e = (await store.entities.get('local', entityId))!;
  await store.accounts.get(e.accountId);
  const seq = e.transcriptMessages + 1;
  const now = new Date().toISOString();
  const block = (s: number, role: 'user' | 'assistant') => ({
    id: randomUUID(), position: s, kind: 'message' as const, role, content, tokens: 8, coversFrom: s, coversTo: s,
  });
  const ok = await store.entities.commitTurn({
    entityId,
    lease: { subject, owner },
    messages: [
      { seq, role: 'user', content, tokens: 8, createdAt: now },
      { seq: seq + 1, role: 'assistant', content, tokens: 8, createdAt: now },
    ],
    deleteBlockIds: [],
    insertBlocks: [block(seq, 'user'), block(seq + 1, 'assistant')],
    counters: { transcriptMessages: seq + 1, transcriptTokens: e.transcriptTokens + 16, windowTokens: e.windowTokens + 16, windowBlocks: e.windowBlocks + 2, updatedAt: now },
    charge: { accountId: e.accountId, entityId, model: e.model, inputTokens: 8, outputTokens: 8, costUsd: 0, createdAt: now },
  });
  if (!ok) throw new Error('lease lost');
}

/** A store with `n` fresh entities (the rows an engine would have made). */
export function floorStore(path: string, n: number): { store: SqliteStore; ids: string[] } {
  const store = SqliteStore.open(path);
  const ids: string[] = [];
  const now = new Date().toISOString();
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    store.repos.entities.insert({
      id, accountId: 'local', name: `floor ${i}`, instructions: '', instructionsTokens: 0, model: 'mgpt-1-27b', state: 'none',
      budgetTokens: 1_000_000, capTokens: 10_000_000, transcriptMessages: 0, transcriptTokens: 0, windowTokens: 0, windowBlocks: 0,
      createdAt: now, updatedAt: now,
    });
    ids.push(id);
  }
  return { store, ids };
}

/** Turns per second of the SQL alone, one at a time, in this process. */
export async function sqlTurnsPerSecond(path: string, seconds: number): Promise<number> {
  const { store, ids } = floorStore(path, 1);
  for (let i = 0; i < 200; i++) await sqlTurn(store, ids[0], `warm ${i}`);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) await sqlTurn(store, ids[0], `turn ${n++}`);
  const rate = n / ((performance.now() - t0) / 1000);
  await store.close();
  return rate;
}

// As a server: bare node:http whose every POST /e/<entity index> runs one turn's SQL and answers like bare-server.mjs.
if (process.argv[1]?.endsWith('sql-floor.ts') && process.argv[2]) {
  const { store, ids } = floorStore(process.argv[2], 16);
  if (process.env.MGPT_FLOOR_CHECKPOINTS === '1') store.checkpointInBackground();
  listenAndPrint(
    bareServer(async (url: string, content: string) => {
      const id = ids[Number(url.split('/').pop()) % ids.length];
      await sqlTurn(store, id, content);
      return id;
    }),
  );
}
