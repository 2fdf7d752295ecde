import type { Pool, PoolClient } from 'pg';
import type { EntityHistory, HistoryStore, PromptHeadRow, RotationRow, SteerWrite, TurnWindowRow, TurnWindowWrite } from '../types.js';
import { inTransaction, type Queryable } from './pg-db.js';

const ROTATION_COLS = `entity_id AS "entityId", n, id, created_at AS "createdAt", trigger, seq, from_seq AS "fromSeq", to_seq AS "toSeq",
  summary_id AS "summaryId", covers_from AS "coversFrom", summary_text AS "summaryText", summary_tokens AS "summaryTokens",
  provider, model, prompt_tokens AS "promptTokens", cached_tokens AS "cachedTokens", completion_tokens AS "completionTokens",
  blocks_before AS "blocksBefore", blocks_after AS "blocksAfter", folded_ids AS "foldedIds", undone`;

/** An entity's window history on PostgreSQL: rotations, prompt heads and per-turn window records. */
export class PgHistoryStore implements HistoryStore {
  /** `steer` is the entity store's (it rewrites the window as that store writes blocks). */
  constructor(
    private readonly pool: Pool,
    readonly steer: (w: SteerWrite) => Promise<boolean>,
  ) {}

  async rotations(entityId: string): Promise<RotationRow[]> {
    return rotationsOf(this.pool, entityId);
  }

  async rotationsNumbered(entityId: string, ns: number[]): Promise<RotationRow[]> {
    return this.select(`entity_id = $1 AND n = ANY($2::bigint[]) ORDER BY n`, [entityId, ns]);
  }

  async rotationsFolding(entityId: string, from: number, to: number): Promise<RotationRow[]> {
    return this.select(`entity_id = $1 AND to_seq >= $2 AND from_seq <= $3 AND trigger <> 'resummarize' ORDER BY n`, [entityId, from, to]);
  }

  async summaryWriter(entityId: string, blockId: string, text: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT n FROM rotations WHERE entity_id = $1 AND summary_id = $2 AND summary_text = $3 ORDER BY n DESC LIMIT 1`,
      [entityId, blockId, text],
    );
    return rows[0]?.n;
  }

  async lastRotation(entityId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT coalesce(max(n), 0) AS n FROM rotations WHERE entity_id = $1`, [entityId]);
    return rows[0].n;
  }

  async turnWindow(entityId: string, seq: number): Promise<(TurnWindowRow & { head: string }) | undefined> {
    const { rows } = await this.pool.query<TurnWindowRow & { head: string }>(
      `SELECT t.seq, t.head_id AS "headId", t.blocks, t.tail, h.messages AS head FROM prompt_heads h JOIN turn_windows t ON t.head_id = h.id
       WHERE h.entity_id = $1 AND t.seq = $2`,
      [entityId, seq],
    );
    return rows[0];
  }

  async seqAt(entityId: string, iso: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ seq: number | null }>(
      `SELECT max(seq) AS seq FROM messages WHERE entity_id = $1 AND role = 'user' AND created_at <= $2`,
      [entityId, iso],
    );
    return rows[0].seq ?? undefined;
  }

  async history(entityId: string): Promise<EntityHistory> {
    return inTransaction(this.pool, (c) => historyOf(c, entityId), 'snapshot');
  }

  private async select(where: string, values: unknown[]): Promise<RotationRow[]> {
    return (await this.pool.query<RotationRow>(`SELECT ${ROTATION_COLS} FROM rotations WHERE ${where}`, values)).rows;
  }
}

/** The entity's whole history (inside the caller's snapshot). */
export async function historyOf(q: Queryable, entityId: string): Promise<EntityHistory> {
  return {
    rotations: await rotationsOf(q, entityId),
    heads: (await q.query<PromptHeadRow>(`SELECT id, sha256, messages FROM prompt_heads WHERE entity_id = $1 ORDER BY id`, [entityId])).rows,
    turns: (await q.query<TurnWindowRow>(
      `SELECT t.seq, t.head_id AS "headId", t.blocks, t.tail FROM prompt_heads h JOIN turn_windows t ON t.head_id = h.id WHERE h.entity_id = $1 ORDER BY t.seq`,
      [entityId],
    )).rows,
  };
}

async function rotationsOf(q: Queryable, entityId: string): Promise<RotationRow[]> {
  return (await q.query<RotationRow>(`SELECT ${ROTATION_COLS} FROM rotations WHERE entity_id = $1 ORDER BY n`, [entityId])).rows;
}

export async function insertRotation(q: Queryable, r: RotationRow): Promise<void> {
  await q.query(
    `INSERT INTO rotations (entity_id, n, id, created_at, trigger, seq, from_seq, to_seq, summary_id, covers_from, summary_text,
       summary_tokens, provider, model, prompt_tokens, cached_tokens, completion_tokens, blocks_before, blocks_after, folded_ids, undone)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
    [r.entityId, r.n, r.id, r.createdAt, r.trigger, r.seq, r.fromSeq, r.toSeq, r.summaryId, r.coversFrom, r.summaryText,
      r.summaryTokens, r.provider, r.model, r.promptTokens, r.cachedTokens, r.completionTokens, r.blocksBefore, r.blocksAfter,
      r.foldedIds, r.undone],
  );
}

/** The head's id, stored now if this entity has not sent it before (the entity's lease serializes its writers). */
async function headId(c: PoolClient, entityId: string, sha256: string, messages: string): Promise<number> {
  const found = await c.query<{ id: number }>(`SELECT id FROM prompt_heads WHERE entity_id = $1 AND sha256 = $2`, [entityId, sha256]);
  if (found.rows.length) return found.rows[0].id;
  const { rows } = await c.query<{ id: number }>(
    `INSERT INTO prompt_heads (entity_id, sha256, messages) VALUES ($1, $2, $3) RETURNING id`,
    [entityId, sha256, messages],
  );
  return rows[0].id;
}

async function insertTurnWindow(c: Queryable, id: number, t: Omit<TurnWindowWrite, 'head' | 'headSha256'>): Promise<void> {
  await c.query(`INSERT INTO turn_windows (head_id, seq, blocks, tail) VALUES ($1, $2, $3, $4)`, [id, t.seq, t.blocks, t.tail]);
}

/** A turn's history rows, inside its transaction: the head is looked up (or stored) on `c`, the rows go to `writes` (`c` itself, or a batch sent later). */
export async function writeTurnHistory(c: PoolClient, writes: Queryable, entityId: string, rotation?: RotationRow, t?: TurnWindowWrite): Promise<void> {
  if (rotation) await insertRotation(writes, rotation);
  if (t) await insertTurnWindow(writes, await headId(c, entityId, t.headSha256, t.head), t);
}

/** An archive's history, its heads renumbered as this database numbers them. */
export async function importHistory(c: PoolClient, entityId: string, h: EntityHistory): Promise<void> {
  const ids = new Map<number, number>();
  for (const head of h.heads) ids.set(head.id, await headId(c, entityId, head.sha256, head.messages));
  for (const r of h.rotations) await insertRotation(c, { ...r, entityId });
  for (const t of h.turns) await insertTurnWindow(c, ids.get(t.headId)!, t);
}
