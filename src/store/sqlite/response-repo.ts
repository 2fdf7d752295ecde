import { type Db, Statements } from './db.js';
import type { ConversationRow, ResponseRow } from '../types.js';

/** The OpenAI Responses facade's rows: responses (a name for an entity turn) and conversations (an entity's metadata). */
export class ResponseRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  insert(row: ResponseRow): void {
    this.s
      .get(
        `INSERT INTO openai_responses (id, account_id, entity_id, root_entity_id, after_seq, reply_seq, idempotency_key, body, input, pending, created_at)
         VALUES (@id, @accountId, @entityId, @rootEntityId, @afterSeq, @replySeq, @idempotencyKey, @body, @input, @pending, @createdAt)`,
      )
      .run(row);
  }

  get(accountId: string, id: string): ResponseRow | undefined {
    return this.s.get(`SELECT ${COLUMNS} FROM openai_responses WHERE id = ? AND account_id = ?`).get(id, accountId) as ResponseRow | undefined;
  }

  byKey(entityId: string, key: string): ResponseRow | undefined {
    return this.s
      .get(`SELECT ${COLUMNS} FROM openai_responses WHERE entity_id = ? AND idempotency_key = ? ORDER BY created_at DESC LIMIT 1`)
      .get(entityId, key) as ResponseRow | undefined;
  }

  latest(entityId: string): ResponseRow | undefined {
    return this.s.get(`SELECT ${COLUMNS} FROM openai_responses WHERE entity_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`).get(entityId) as ResponseRow | undefined;
  }

  delete(accountId: string, id: string): boolean {
    return this.s.get('DELETE FROM openai_responses WHERE id = ? AND account_id = ?').run(id, accountId).changes > 0;
  }

  conversation(accountId: string, entityId: string): ConversationRow | undefined {
    return this.s
      .get(`SELECT ${CONVERSATION_COLUMNS} FROM openai_conversations WHERE entity_id = ? AND account_id = ?`)
      .get(entityId, accountId) as ConversationRow | undefined;
  }

  putConversation(row: ConversationRow): void {
    this.s
      .get(
        `INSERT INTO openai_conversations (entity_id, account_id, metadata, held, deleted_at, created_at)
         VALUES (@entityId, @accountId, @metadata, @held, @deletedAt, @createdAt)
         ON CONFLICT (entity_id) DO UPDATE SET metadata = excluded.metadata, held = excluded.held, deleted_at = excluded.deleted_at`,
      )
      .run(row);
  }
}

const COLUMNS = `id, account_id AS accountId, entity_id AS entityId, root_entity_id AS rootEntityId, after_seq AS afterSeq, reply_seq AS replySeq,
  idempotency_key AS idempotencyKey, body, input, pending, created_at AS createdAt`;
const CONVERSATION_COLUMNS = 'entity_id AS entityId, account_id AS accountId, metadata, held, deleted_at AS deletedAt, created_at AS createdAt';
