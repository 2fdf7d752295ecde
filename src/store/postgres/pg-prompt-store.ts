import type { Pool } from 'pg';
import type { PromptRow, PromptRowStore } from '../types.js';

/** Stored prompts in the database, so every replica creates universes from one set (docs/design.md#stored-prompts). */
export class PgPromptStore implements PromptRowStore {
  constructor(private readonly pool: Pool) {}

  async get(name: string): Promise<PromptRow | undefined> {
    return (await this.pool.query<PromptRow>(`SELECT ${COLUMNS} FROM stored_prompts WHERE name = $1`, [name])).rows[0];
  }

  async list(): Promise<PromptRow[]> {
    return (await this.pool.query<PromptRow>(`SELECT ${COLUMNS} FROM stored_prompts ORDER BY name`)).rows;
  }

  async insert(row: PromptRow, opts: { overRemoved: boolean }): Promise<boolean> {
    // A live prompt is never replaced here; a tombstone only by an explicit add.
    const conflict = opts.overRemoved ? `UPDATE SET ${SET} WHERE stored_prompts.text IS NULL` : 'NOTHING';
    const r = await this.pool.query(`${INSERT} ON CONFLICT (name) DO ${conflict}`, values(row));
    return (r.rowCount ?? 0) > 0;
  }

  async put(row: PromptRow): Promise<void> {
    await this.pool.query(`${INSERT} ON CONFLICT (name) DO UPDATE SET ${SET}`, values(row));
  }

  async refresh(row: PromptRow): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE stored_prompts SET text = $2, response_format = $3, additional_instructions = $4, updated_at = $6
       WHERE name = $1 AND text IS NOT NULL AND source = $5`,
      values(row),
    );
    return (r.rowCount ?? 0) > 0;
  }

  async remove(name: string, at: string): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE stored_prompts SET text = NULL, response_format = NULL, additional_instructions = NULL, source = NULL, updated_at = $2
       WHERE name = $1 AND text IS NOT NULL`,
      [name, at],
    );
    return (r.rowCount ?? 0) > 0;
  }
}

function values(row: PromptRow): unknown[] {
  return [row.name, row.text, row.responseFormat, row.additionalInstructions, row.source, row.updatedAt];
}

const INSERT =
  'INSERT INTO stored_prompts (name, text, response_format, additional_instructions, source, updated_at) VALUES ($1, $2, $3, $4, $5, $6)';
const SET =
  'text = excluded.text, response_format = excluded.response_format, additional_instructions = excluded.additional_instructions, source = excluded.source, updated_at = excluded.updated_at';
const COLUMNS =
  'name, text, response_format AS "responseFormat", additional_instructions AS "additionalInstructions", source, updated_at AS "updatedAt"';
