import type { Pool } from 'pg';
import type { ConversationRow, ResponseRow, ResponseStore } from '../types.js';

/** The OpenAI Responses facade's rows, shared by every replica. */
export class PgResponseStore implements ResponseStore {
  constructor(private readonly pool: Pool) {}

  async insert(r: ResponseRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO openai_responses (id, account_id, entity_id, root_entity_id, after_seq, reply_seq, idempotency_key, body, input, pending, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [r.id, r.accountId, r.entityId, r.rootEntityId, r.afterSeq, r.replySeq, r.idempotencyKey, r.body, r.input, r.pending, r.createdAt],
    );
  }

  async get(accountId: string, id: string): Promise<ResponseRow | undefined> {
    const { rows } = await this.pool.query<ResponseRow>(`SELECT ${COLUMNS} FROM openai_responses WHERE id = $1 AND account_id = $2`, [id, accountId]);
    return rows[0];
  }

  async byKey(entityId: string, key: string): Promise<ResponseRow | undefined> {
    const { rows } = await this.pool.query<ResponseRow>(
      `SELECT ${COLUMNS} FROM openai_responses WHERE entity_id = $1 AND idempotency_key = $2 ORDER BY created_at DESC LIMIT 1`,
      [entityId, key],
    );
    return rows[0];
  }

  async latest(entityId: string): Promise<ResponseRow | undefined> {
    const { rows } = await this.pool.query<ResponseRow>(`SELECT ${COLUMNS} FROM openai_responses WHERE entity_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [entityId]);
    return rows[0];
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM openai_responses WHERE id = $1 AND account_id = $2', [id, accountId]);
    return (r.rowCount ?? 0) > 0;
  }

  async conversation(accountId: string, entityId: string): Promise<ConversationRow | undefined> {
    const { rows } = await this.pool.query<ConversationRow>(
      `SELECT ${CONVERSATION_COLUMNS} FROM openai_conversations WHERE entity_id = $1 AND account_id = $2`,
      [entityId, accountId],
    );
    return rows[0];
  }

  async putConversation(r: ConversationRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO openai_conversations (entity_id, account_id, metadata, held, deleted_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (entity_id) DO UPDATE SET metadata = excluded.metadata, held = excluded.held, deleted_at = excluded.deleted_at`,
      [r.entityId, r.accountId, r.metadata, r.held, r.deletedAt, r.createdAt],
    );
  }
}

const COLUMNS = `id, account_id AS "accountId", entity_id AS "entityId", root_entity_id AS "rootEntityId", after_seq AS "afterSeq", reply_seq AS "replySeq",
  idempotency_key AS "idempotencyKey", body, input, pending, created_at AS "createdAt"`;
const CONVERSATION_COLUMNS = 'entity_id AS "entityId", account_id AS "accountId", metadata, held, deleted_at AS "deletedAt", created_at AS "createdAt"';
