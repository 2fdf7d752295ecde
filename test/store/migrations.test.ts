import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
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
      'accounts', 'api_keys', 'blocks', 'entities', 'generation_logs', 'idempotency_keys', 'ledger', 'messages', 'route_calibration', 'turn_leases',
      'universe_messages', 'universe_requests', 'universes',
    ]);
    expect(db.prepare(`SELECT id, balance_usd, user_id FROM accounts`).all()).toEqual([
      { id: 'local', balance_usd: null, user_id: '00000000-0000-4000-8000-000000000001' },
    ]);
    db.close();
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
