import { type Db, Statements } from './db.js';
import type { ImportSourceRow } from '../types.js';

/** Where imported conversations went; see EntityStore.importSources. */
export class ImportRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  sources(accountId: string, source: string, sourceIds: readonly string[]): ImportSourceRow[] {
    return this.s
      .get(
        `SELECT account_id AS accountId, source, source_id AS sourceId, target, entity_id AS entityId,
           last_message_id AS lastMessageId, source_messages AS sourceMessages, imported_at AS importedAt
         FROM import_sources WHERE account_id = ? AND source = ? AND source_id IN (SELECT value FROM json_each(?))`,
      )
      .all(accountId, source, JSON.stringify(sourceIds)) as ImportSourceRow[];
  }

  /** Records (or moves on, for --update) where the conversation went, for its target. */
  save(row: ImportSourceRow): void {
    this.s
      .get(
        `INSERT INTO import_sources (account_id, source, source_id, target, entity_id, last_message_id, source_messages, imported_at)
         VALUES (@accountId, @source, @sourceId, @target, @entityId, @lastMessageId, @sourceMessages, @importedAt)
         ON CONFLICT (account_id, source, source_id, target) DO UPDATE SET entity_id = excluded.entity_id,
           last_message_id = excluded.last_message_id, source_messages = excluded.source_messages, imported_at = excluded.imported_at`,
      )
      .run(row);
  }
}
