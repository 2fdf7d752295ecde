import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/store/sqlite/db.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { parseSearch } from '../../src/core/text/search-query.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp.js';

describe('store', () => {
  const dir = tempDir();

  it('migrates a blank database to the full schema with the engine pragmas', () => {
    const db = openDatabase(join(dir, 'blank.db'));
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('secure_delete', { simple: true })).toBe(1);
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
    expect(tables).toEqual([
      'accounts', 'api_keys', 'blocks', 'completion_keys', 'entities', 'generation_logs', 'idempotency_keys', 'import_sources', 'ledger', 'memory_blocks', 'memory_history', 'message_vectors', 'messages',
      'generation_logs_search', 'generation_logs_search_config', 'generation_logs_search_data', 'generation_logs_search_docsize', 'generation_logs_search_idx',
      'messages_ranked', 'messages_ranked_config', 'messages_ranked_data', 'messages_ranked_docsize', 'messages_ranked_idx', 'messages_search', 'messages_search_config', 'messages_search_data', 'messages_search_docsize', 'messages_search_idx', 'openai_conversations', 'openai_responses', 'prompt_heads', 'rate_state', 'rotations', 'route_calibration', 'stored_prompts', 'turn_leases', 'turn_windows',
      'universe_messages', 'universe_messages_search', 'universe_messages_search_config', 'universe_messages_search_data', 'universe_messages_search_docsize',
      'universe_messages_search_idx', 'universe_requests', 'universes',
    ].sort());
    expect(db.prepare(`SELECT id, balance_usd, user_id FROM accounts`).all()).toEqual([
      { id: 'local', balance_usd: null, user_id: '00000000-0000-4000-8000-000000000001' },
    ]);
    db.close();
  });

  it('indexes the transcripts, universe messages and logs a database already holds when the search migrations run', async () => {
    const path = join(dir, 'before-search.db');
    const raw = new Database(path);
    raw.pragma('foreign_keys = ON');
    // Every migration before search's, as a database of the previous release holds them.
    const search = MIGRATIONS.findIndex((m) => m.includes('CREATE VIRTUAL TABLE messages_search'));
    expect(search).toBeGreaterThan(0);
    for (const [v, sql] of MIGRATIONS.slice(0, search).entries()) {
      raw.exec(sql);
      raw.pragma(`user_version = ${v + 1}`);
    }
    raw.prepare(`INSERT INTO entities (id, account_id, name, instructions, model, state, budget_tokens, cap_tokens, created_at, updated_at)
      VALUES ('e1', 'local', 'ada', '', 'mgpt-1-27b', 'none', 32000, 1000000, 't', 't')`).run();
    const insert = raw.prepare(`INSERT INTO messages (entity_id, seq, role, content, tokens, created_at) VALUES ('e1', ?, ?, ?, 3, ?)`);
    for (const [seq, content] of ['the secret word is zanzibar42', 'noted', 'and the harbour?', 'by the old mill'].entries()) {
      insert.run(seq + 1, seq % 2 ? 'assistant' : 'user', content, `2026-01-0${seq + 1}T00:00:00.000Z`);
    }
    raw.prepare(`INSERT INTO universes (id, user_id, stored_prompt, prompt_text, prompt_fingerprint, created_at, updated_at)
      VALUES ('u1', '00000000-0000-4000-8000-000000000001', 'p', 'text', 'fp', 't', 't')`).run();
    raw.prepare(`INSERT INTO universe_messages (universe_id, seq, role, content, created_at) VALUES ('u1', 1, 'user', 'a dragon named Quillmoss', 't')`).run();
    raw.prepare(`INSERT INTO generation_logs (id, kind, owner_user_id, user_id, model, status, created_at, request_summary, response_summary)
      VALUES ('l1', 'text', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000001', 'm', 'ok', 't', '{"userInput":"where is Quillmoss"}', '{"assistantRaw":"asleep"}')`).run();
    raw.close();
    const store = SqliteStore.open(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    const hits = await store.entities.search({ accountId: 'local', terms: parseSearch('zanzibar42'), limit: 10 });
    expect(hits).toMatchObject([{ entityId: 'e1', entityName: 'ada', seq: 1, role: 'user' }]);
    expect((await store.entities.messages('e1', 0, 10)).map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    // The ranked index (issue 32) holds them too, by their stems: "harbours" finds "harbour".
    expect(await store.entities.searchAny({ accountId: 'local', words: ['harbours', 'mills'], limit: 10 })).toEqual(expect.arrayContaining([expect.objectContaining({ seq: 3 }), expect.objectContaining({ seq: 4 })]));
    expect((await store.entities.get('local', 'e1'))?.recall).toBe(0);
    const quillmoss = parseSearch('quillmoss');
    expect(await store.universes.search({ userId: '00000000-0000-4000-8000-000000000001', terms: quillmoss, limit: 10 })).toMatchObject([{ universeId: 'u1', seq: 1 }]);
    expect(await store.logs.search({ ownerUserId: '00000000-0000-4000-8000-000000000001', terms: quillmoss, limit: 10 })).toMatchObject([{ id: 'l1', text: 'where is Quillmoss asleep' }]);
    await store.close();
  });

  it('is idempotent and refuses a database from a newer mgpt', () => {
    const path = join(dir, 'again.db');
    openDatabase(path).close();
    const db = openDatabase(path);
    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    db.close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    raw.close();
    expect(() => openDatabase(path)).toThrow(/newer than this mgpt/);
  });
});

describe('the lease migration', () => {
  const dir = tempDir();

  it('keys leases by subject, keeps held entity leases, and still drops a lease with its entity', () => {
    const db = new Database(join(dir, 'old.db'));
    db.pragma('foreign_keys = ON');
    // The database as it was just before the lease migration.
    const leaseMigration = MIGRATIONS.findIndex((m) => m.includes('turn_leases_v2'));
    for (const sql of MIGRATIONS.slice(0, leaseMigration)) db.exec(sql);
    db.pragma(`user_version = ${leaseMigration}`);
    db.exec(`INSERT INTO entities (id, account_id, name, instructions, instructions_tokens, model, state, budget_tokens, cap_tokens,
      transcript_messages, transcript_tokens, window_tokens, window_blocks, created_at, updated_at)
      VALUES ('e1', 'local', '', '', 0, 'mgpt-1-27b', 'none', 1000, 10000, 0, 0, 0, 0, 'now', 'now')`);
    db.exec(`INSERT INTO turn_leases (entity_id, owner, idempotency_key, content_sha256, expires_at) VALUES ('e1', 'o1', 'k', 'h', 42)`);
    migrate(db);
    expect(db.prepare(`SELECT * FROM turn_leases`).all()).toEqual([
      { subject: 'entity:e1', owner: 'o1', idempotency_key: 'k', content_sha256: 'h', expires_at: 42 },
    ]);
    db.exec(`DELETE FROM entities WHERE id = 'e1'`);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM turn_leases`).get()).toEqual({ n: 0 });
    db.close();
  });
});
