import type { Pool, PoolClient } from 'pg';
import { prefixEnd } from '../prefix-range.js';
import type {
  BlockRow,
  ChatImportWrite,
  EntityHeadUpdate,
  EntityImport,
  EntityRow,
  EntitySnapshot,
  EntityStore,
  EntityTurnWrite,
  ImportConflict,
  ImportSourceRow,
  LedgerRow,
  LeaseClaim,
  MessageHit,
  MessageRow,
  MessageSearch,
  RankedSearch,
  SteerWrite,
  TermMatch,
  TermMatchQuery,
} from '../types.js';
import { tsAny, tsForms, tsQuery } from '../search-syntax.js';
import { insertLog } from './pg-log-store.js';
import { insertMemoryHistory, listMemory, memoryHistory, upsertMemory, writeMemory } from './pg-memory-store.js';
import { inTransaction, type Queryable } from './pg-db.js';
import { StatementBatch } from './pg-batch.js';
import { insertBlocks, insertMessages } from './pg-row-inserts.js';
import { historyOf, importHistory, insertRotation, writeTurnHistory } from './pg-history-store.js';

const ENTITY_COLS = `id, account_id AS "accountId", name, instructions, instructions_tokens AS "instructionsTokens", model, state,
  budget_tokens AS "budgetTokens", cap_tokens AS "capTokens",
  transcript_messages AS "transcriptMessages", transcript_tokens AS "transcriptTokens",
  window_tokens AS "windowTokens", window_blocks AS "windowBlocks", recall_mode AS recall, recall_tokens AS "recallTokens",
  memory_tool AS "memoryTool", created_at AS "createdAt", updated_at AS "updatedAt"`;

const BLOCK_COLS = `id, position, kind, role, content, tokens, covers_from AS "coversFrom", covers_to AS "coversTo"`;
const MESSAGE_COLS = `seq, role, content, tokens, created_at AS "createdAt"`;

/** Entities, their transcripts and their windows; each write one transaction. */
export class PgEntityStore implements EntityStore {
  constructor(private readonly pool: Pool) {}

  async insert(row: EntityRow): Promise<void> {
    await insertEntity(this.pool, row);
  }

  async get(accountId: string, id: string): Promise<EntityRow | undefined> {
    return getEntity(this.pool, accountId, id);
  }

  async list(accountId: string, limit: number, offset = 0): Promise<EntityRow[]> {
    const { rows } = await this.pool.query<EntityRow>(
      `SELECT ${ENTITY_COLS} FROM entities WHERE account_id = $1 ORDER BY updated_at DESC, rid DESC LIMIT $2 OFFSET $3`,
      [accountId, limit, offset],
    );
    return rows;
  }

  /** Ids are lowercase hex and dashes, all below "g": [prefix, prefix + "g") is exactly the ids starting with it. */
  async matching(accountId: string, name: string, idPrefix: string | null, limit: number): Promise<EntityRow[]> {
    const { rows } = await this.pool.query<EntityRow>(
      `SELECT ${ENTITY_COLS} FROM entities
       WHERE account_id = $1 AND (name = $2 OR ($3::text IS NOT NULL AND id >= $3 AND id < $4))
       ORDER BY updated_at DESC, rid DESC LIMIT $5`,
      [accountId, name, idPrefix, idPrefix === null ? null : `${idPrefix}g`, limit],
    );
    return rows;
  }

  /** See EntityStore.namesLike: the name, and the prefix as a range, each a search of the (account_id, name) index (names compare as "C"). */
  async namesLike(accountId: string, name: string, prefix: string): Promise<string[]> {
    const end = prefixEnd(prefix);
    const range = end === null ? 'name >= $3' : 'name >= $3 AND name < $4';
    const { rows } = await this.pool.query<{ name: string }>(
      `SELECT name FROM entities WHERE account_id = $1 AND name = $2
       UNION ALL SELECT name FROM entities WHERE account_id = $1 AND ${range} AND name <> $2`,
      end === null ? [accountId, name, prefix] : [accountId, name, prefix, end],
    );
    return rows.map((r) => r.name);
  }

  /** See EntityStore.search: ts_rank_cd over the GIN-indexed tsvector, filtered to the account (and the entities, role and time given). */
  async search(q: MessageSearch): Promise<MessageHit[]> {
    const { rows } = await this.pool.query<MessageHit>(
      `SELECT m.entity_id AS "entityId", e.name AS "entityName", m.seq, m.role, m.content, m.tokens, m.created_at AS "createdAt"
       FROM messages m JOIN entities e ON e.id = m.entity_id, to_tsquery('simple', $1) query
       WHERE m.search @@ query AND e.account_id = $2
         AND ($3::text[] IS NULL OR m.entity_id = ANY($3)) AND ($4::text IS NULL OR m.role = $4)
         AND ($5::text IS NULL OR m.created_at >= $5) AND ($7::bigint IS NULL OR m.seq < $7)
       ORDER BY ts_rank_cd(m.search, query, 2) DESC, m.created_at DESC, m.seq DESC LIMIT $6`,
      [tsQuery(q.terms), q.accountId, q.entityIds ?? null, q.role ?? null, q.since ?? null, q.limit, q.beforeSeq ?? null],
    );
    return rows;
  }

  /** See EntityStore.searchAny: ts_rank_cd over the english tsvector, any word, filtered as search is. */
  async searchAny(q: RankedSearch): Promise<MessageHit[]> {
    const { rows } = await this.pool.query<MessageHit>(
      `SELECT m.entity_id AS "entityId", e.name AS "entityName", m.seq, m.role, m.content, m.tokens, m.created_at AS "createdAt",
              ts_rank_cd(m.ranked, query, 1) AS score
       FROM messages m JOIN entities e ON e.id = m.entity_id, to_tsquery('english', $1) query
       WHERE m.ranked @@ query AND e.account_id = $2
         AND ($3::text[] IS NULL OR m.entity_id = ANY($3)) AND ($4::text IS NULL OR m.role = $4)
         AND ($5::text IS NULL OR m.created_at >= $5) AND ($7::bigint IS NULL OR m.seq < $7)
       ORDER BY score DESC, m.created_at DESC, m.seq DESC LIMIT $6`,
      [tsAny(q.words), q.accountId, q.entityIds ?? null, q.role ?? null, q.since ?? null, q.limit, q.beforeSeq ?? null],
    );
    return rows;
  }

  /** See EntityStore.termMatches: the english tsvector's matches among the entity's messages. */
  async termMatches(q: TermMatchQuery): Promise<Array<TermMatch[] | null>> {
    const found = await Promise.all(
      q.terms.map((forms) =>
        forms.length
          ? this.pool.query<TermMatch>(
              `SELECT seq::int AS seq, tokens FROM messages WHERE entity_id = $1 AND ranked @@ to_tsquery('english', $2) AND ($3::bigint IS NULL OR seq < $3) LIMIT $4`,
              [q.entityId, tsForms(forms), q.beforeSeq ?? null, q.cap],
            )
          : undefined,
      ),
    );
    return found.map((r) => (!r ? [] : r.rows.length >= q.cap ? null : r.rows));
  }

  async messagesAt(entityId: string, seqs: number[]): Promise<MessageRow[]> {
    const { rows } = await this.pool.query<MessageRow>(`SELECT ${MESSAGE_COLS} FROM messages WHERE entity_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`, [entityId, seqs]);
    return rows;
  }

  /** Messages, blocks, idempotency keys cascade; the lease goes by trigger. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const r = await this.pool.query(`DELETE FROM entities WHERE id = $1 AND account_id = $2`, [id, accountId]);
    return (r.rowCount ?? 0) > 0;
  }

  async messages(entityId: string, after: number, limit: number): Promise<MessageRow[]> {
    const { rows } = await this.pool.query<MessageRow>(
      `SELECT ${MESSAGE_COLS} FROM messages WHERE entity_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [entityId, after, limit],
    );
    return rows;
  }

  async messagesUpTo(entityId: string, after: number, maxSeq: number, limit: number): Promise<MessageRow[]> {
    const { rows } = await this.pool.query<MessageRow>(
      `SELECT ${MESSAGE_COLS} FROM messages WHERE entity_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
      [entityId, after, maxSeq, limit],
    );
    return rows;
  }

  async window(entityId: string): Promise<BlockRow[]> {
    return windowOf(this.pool, entityId);
  }

  /** Rewrites only the fields given, so it never loses a turn's counters, nor a turn this. */
  async updateHead(accountId: string, id: string, h: EntityHeadUpdate): Promise<EntityRow | undefined> {
    const { rows } = await this.pool.query<EntityRow>(
      `UPDATE entities SET name = COALESCE($3, name), instructions = COALESCE($4, instructions),
         instructions_tokens = COALESCE($5, instructions_tokens), budget_tokens = COALESCE($6, budget_tokens),
         recall_mode = COALESCE($8, recall_mode), cap_tokens = COALESCE($9, cap_tokens), recall_tokens = COALESCE($10, recall_tokens),
         memory_tool = COALESCE($11, memory_tool), updated_at = $7
       WHERE id = $1 AND account_id = $2 RETURNING ${ENTITY_COLS}`,
      [id, accountId, h.name ?? null, h.instructions ?? null, h.instructionsTokens ?? null, h.budgetTokens ?? null, h.updatedAt, h.recall ?? null, h.capTokens ?? null, h.recallTokens ?? null, h.memoryTool ?? null],
    );
    return rows[0];
  }

  async snapshot(accountId: string, id: string): Promise<EntitySnapshot | undefined> {
    return inTransaction(
      this.pool,
      async (c) => {
        const entity = await getEntity(c, accountId, id);
        if (!entity) return undefined;
        const memory = { blocks: await listMemory(c, id), history: await memoryHistory(c, id) };
        return { entity, window: await windowOf(c, id), history: await historyOf(c, id), memory };
      },
      'snapshot',
    );
  }

  /**
   * Taking the lease row away first both checks that it is still this turn's and locks it until
   * the commit (another replica waits, then finds it gone and free); the rows nobody reads back go
   * as one statement (StatementBatch), so a turn is a few round trips, not one per table.
   */
  async commitTurn(w: EntityTurnWrite): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      if (!(await takeOwnedLease(c, w.lease))) return false;
      // An id taken meanwhile writes nothing: the caller reports a conflict.
      if (w.create && (await writeImport(c, w.create))) return false;
      // Its own statement: a summary takes a folded block's position, and a unique index checks each row as the batch writes it.
      if (w.deleteBlockIds.length) await c.query(`DELETE FROM blocks WHERE id = ANY($1::text[])`, [w.deleteBlockIds]);
      const batch = new StatementBatch();
      await insertMessages(batch, w.entityId, w.messages);
      await insertBlocks(batch, w.entityId, w.insertBlocks);
      await batch.query(
        `UPDATE entities SET transcript_messages = $2, transcript_tokens = $3, window_tokens = $4, window_blocks = $5,
           updated_at = $6 WHERE id = $1`,
        [w.entityId, w.counters.transcriptMessages, w.counters.transcriptTokens, w.counters.windowTokens,
          w.counters.windowBlocks, w.counters.updatedAt],
      );
      await charge(batch, w.charge);
      if (w.idempotency) {
        await batch.query(
          `INSERT INTO idempotency_keys (entity_id, key, content_sha256, completion, created_at) VALUES ($1, $2, $3, $4, $5)`,
          [w.entityId, w.idempotency.key, w.idempotency.row.contentSha256, w.idempotency.row.completion, w.idempotency.createdAt],
        );
      }
      if (w.log) await insertLog(batch, w.log);
      await writeTurnHistory(c, batch, w.entityId, w.rotation, w.turnWindow);
      await batch.send(c);
      // The model's remember calls: one refused now (the user changed memory meanwhile) is left out.
      for (const m of w.memory ?? []) await writeMemory(c, m);
      return true;
    });
  }

  async importEntity(i: EntityImport): Promise<ImportConflict> {
    try {
      return await inTransaction(this.pool, (c) => writeImport(c, i));
    } catch (err) {
      // Two imports of the same kept ids at once: the loser's check passed, its insert did not.
      const taken = i.keepIds ? conflictFromUniqueViolation(err, i) : null;
      if (taken) return taken;
      throw err;
    }
  }
  async importSources(accountId: string, source: string, sourceIds: readonly string[]): Promise<ImportSourceRow[]> {
    const { rows } = await this.pool.query<ImportSourceRow>(
      `SELECT account_id AS "accountId", source, source_id AS "sourceId", target, entity_id AS "entityId",
         last_message_id AS "lastMessageId", source_messages AS "sourceMessages", imported_at AS "importedAt"
       FROM import_sources WHERE account_id = $1 AND source = $2 AND source_id = ANY($3::text[])`,
      [accountId, source, sourceIds],
    );
    return rows;
  }

  async importChat(w: ChatImportWrite): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const a = w.append;
      if (a && !(await lockOwnedLease(c, a.lease))) return false;
      if (w.create) await writeImport(c, w.create);
      if (a) {
        await insertMessages(c, a.entityId, a.messages);
        if (a.deleteBlockIds.length) await c.query(`DELETE FROM blocks WHERE id = ANY($1::text[])`, [a.deleteBlockIds]);
        await insertBlocks(c, a.entityId, a.insertBlocks);
        await c.query(
          `UPDATE entities SET transcript_messages = $2, transcript_tokens = $3, window_tokens = $4, window_blocks = $5,
             updated_at = $6 WHERE id = $1`,
          [a.entityId, a.counters.transcriptMessages, a.counters.transcriptTokens, a.counters.windowTokens, a.counters.windowBlocks, a.counters.updatedAt],
        );
      }
      if (w.rotation) {
        await c.query(`DELETE FROM rotations WHERE entity_id = $1 AND n = $2`, [w.rotation.entityId, w.rotation.n]);
        await insertRotation(c, w.rotation);
      }
      if (w.source) await saveImportSource(c, w.source);
      return true;
    });
  }
}

async function saveImportSource(q: Queryable, r: ImportSourceRow): Promise<void> {
  await q.query(
    `INSERT INTO import_sources (account_id, source, source_id, target, entity_id, last_message_id, source_messages, imported_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (account_id, source, source_id, target) DO UPDATE SET entity_id = excluded.entity_id,
       last_message_id = excluded.last_message_id, source_messages = excluded.source_messages, imported_at = excluded.imported_at`,
    [r.accountId, r.source, r.sourceId, r.target, r.entityId, r.lastMessageId, r.sourceMessages, r.importedAt],
  );
}

/** An import's rows, unless `--keep-id` finds an id taken (then nothing is written). */
async function writeImport(c: PoolClient, i: EntityImport): Promise<ImportConflict> {
  if (i.keepIds) {
    const taken = await firstTaken(c, i);
    if (taken) return taken;
  }
  await insertEntity(c, i.entity);
  await insertMessages(c, i.entity.id, i.messages);
  await insertBlocks(c, i.entity.id, i.blocks);
  if (i.history) await importHistory(c, i.entity.id, i.history);
  for (const b of i.memory?.blocks ?? []) await upsertMemory(c, i.entity.id, b);
  for (const h of i.memory?.history ?? []) await insertMemoryHistory(c, i.entity.id, h);
  return null;
}

/** A steering action's unit of work (see HistoryStore.steer). */
export function steerWrite(pool: Pool, w: SteerWrite): Promise<boolean> {
  return inTransaction(pool, async (c) => {
    if (!(await lockOwnedLease(c, w.lease))) return false;
    await replaceWindow(c, w.entityId, w.window, w.windowTokens, w.updatedAt);
    if (w.insert) await insertRotation(c, w.insert);
    if (w.undo !== undefined) await c.query(`UPDATE rotations SET undone = true WHERE entity_id = $1 AND n = $2`, [w.entityId, w.undo]);
    await releaseLease(c, w.lease);
    return true;
  });
}

/** The whole window rewritten (a steering action), with its counters. */
export async function replaceWindow(q: Queryable, entityId: string, blocks: readonly BlockRow[], windowTokens: number, updatedAt: string): Promise<void> {
  await q.query(`DELETE FROM blocks WHERE entity_id = $1`, [entityId]);
  await insertBlocks(q, entityId, blocks);
  await q.query(`UPDATE entities SET window_tokens = $2, window_blocks = $3, updated_at = $4 WHERE id = $1`, [entityId, windowTokens, blocks.length, updatedAt]);
}

async function insertEntity(q: Queryable, row: EntityRow): Promise<void> {
  await q.query(
    `INSERT INTO entities (id, account_id, name, instructions, instructions_tokens, model, state, budget_tokens, cap_tokens,
       transcript_messages, transcript_tokens, window_tokens, window_blocks, created_at, updated_at, recall_mode, recall_tokens, memory_tool)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
    [row.id, row.accountId, row.name, row.instructions, row.instructionsTokens, row.model, row.state, row.budgetTokens,
      row.capTokens, row.transcriptMessages, row.transcriptTokens, row.windowTokens, row.windowBlocks, row.createdAt,
      row.updatedAt, row.recall ?? 0, row.recallTokens ?? null, row.memoryTool ?? 0],
  );
}

async function getEntity(q: Queryable, accountId: string, id: string): Promise<EntityRow | undefined> {
  const { rows } = await q.query<EntityRow>(`SELECT ${ENTITY_COLS} FROM entities WHERE id = $1 AND account_id = $2`, [id, accountId]);
  return rows[0];
}

async function windowOf(q: Queryable, entityId: string): Promise<BlockRow[]> {
  const { rows } = await q.query<BlockRow>(`SELECT ${BLOCK_COLS} FROM blocks WHERE entity_id = $1 ORDER BY position`, [entityId]);
  return rows;
}

/**
 * Whether the lease row is still this owner's, locking it until the transaction ends so no other
 * replica can take it between this check and the commit. Expiry does not matter: an expired lease
 * no one took still guards the subject, since taking it replaces the owner.
 */
export async function lockOwnedLease(c: PoolClient, l: LeaseClaim): Promise<boolean> {
  const { rows } = await c.query(`SELECT 1 FROM turn_leases WHERE subject = $1 AND owner = $2 FOR UPDATE`, [l.subject, l.owner]);
  return rows.length > 0;
}

/** lockOwnedLease and releaseLease in one statement: the row is gone at the commit, and back if the transaction rolls back. */
async function takeOwnedLease(c: PoolClient, l: LeaseClaim): Promise<boolean> {
  const { rows } = await c.query(`DELETE FROM turn_leases WHERE subject = $1 AND owner = $2 RETURNING 1`, [l.subject, l.owner]);
  return rows.length > 0;
}

export async function releaseLease(q: Queryable, l: LeaseClaim): Promise<void> {
  await q.query(`DELETE FROM turn_leases WHERE subject = $1 AND owner = $2`, [l.subject, l.owner]);
}

/** Records a charge; the balance moves only when the account is metered (as SQLite's round(x, 8)). */
export async function charge(q: Queryable, row: LedgerRow): Promise<void> {
  await q.query(
    `INSERT INTO ledger (account_id, entity_id, key_id, model, input_tokens, output_tokens, cost_usd, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [row.accountId, row.entityId, row.keyId ?? null, row.model, row.inputTokens, row.outputTokens, row.costUsd, row.createdAt],
  );
  await q.query(
    `UPDATE accounts SET balance_usd = round((balance_usd - $1::double precision)::numeric, 8)::double precision
     WHERE id = $2 AND balance_usd IS NOT NULL`,
    [row.costUsd, row.accountId],
  );
}

/**
 * The first id already taken, the entity's before any block's. One statement, so one snapshot: two
 * (entity, then blocks) could straddle a concurrent import's commit and blame a block for it.
 */
async function firstTaken(c: PoolClient, i: EntityImport): Promise<ImportConflict> {
  const ids = i.blocks.map((b) => b.id);
  const { rows } = await c.query<{ entity: boolean; blocks: string[] | null }>(
    `SELECT EXISTS (SELECT 1 FROM entities WHERE id = $1) AS entity,
            (SELECT array_agg(id) FROM blocks WHERE id = ANY($2::text[])) AS blocks`,
    [i.entity.id, ids],
  );
  if (rows[0].entity) return { taken: 'entity', id: i.entity.id };
  const taken = new Set(rows[0].blocks ?? []);
  const first = ids.find((id) => taken.has(id));
  return first === undefined ? null : { taken: 'block', id: first };
}

function conflictFromUniqueViolation(err: unknown, i: EntityImport): ImportConflict {
  const e = err as { code?: string; constraint?: string; detail?: string };
  if (e.code !== '23505') return null;
  if (e.constraint === 'entities_pkey') return { taken: 'entity', id: i.entity.id };
  if (e.constraint === 'blocks_pkey') {
    const id = /\(id\)=\((.*)\)/.exec(e.detail ?? '')?.[1];
    return id === undefined ? null : { taken: 'block', id };
  }
  return null;
}
