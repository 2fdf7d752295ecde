import Database from 'better-sqlite3';

/** Everything a turn may touch, read straight from the file (another connection, like another process). */
export function snapshot(dbPath: string, entityId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    return {
      entity: db.prepare(`SELECT * FROM entities WHERE id = ?`).get(entityId),
      transcript: db.prepare(`SELECT * FROM messages WHERE entity_id = ? ORDER BY seq`).all(entityId),
      window: db.prepare(`SELECT * FROM blocks WHERE entity_id = ? ORDER BY position`).all(entityId),
      ledger: db.prepare(`SELECT * FROM ledger ORDER BY id`).all(),
      accounts: db.prepare(`SELECT * FROM accounts ORDER BY id`).all(),
      idempotency: db.prepare(`SELECT * FROM idempotency_keys WHERE entity_id = ?`).all(entityId),
    };
  } finally {
    db.close();
  }
}

export function integrity(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}
