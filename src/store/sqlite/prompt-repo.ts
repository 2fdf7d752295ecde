import { type Db, Statements } from './db.js';
import type { PromptRow } from '../rows.js';

/** Stored prompts in the database file, so every process on it sees one set (docs/design.md#stored-prompts). */
export class PromptRepo {
  private readonly s: Statements;
  constructor(db: Db) {
    this.s = new Statements(db);
  }

  get(name: string): PromptRow | undefined {
    return this.s.get(`SELECT ${COLUMNS} FROM stored_prompts WHERE name = ?`).get(name) as PromptRow | undefined;
  }

  list(): PromptRow[] {
    return this.s.get(`SELECT ${COLUMNS} FROM stored_prompts ORDER BY name`).all() as PromptRow[];
  }

  insert(row: PromptRow, overRemoved: boolean): boolean {
    // A live prompt is never replaced here; a tombstone only by an explicit add.
    const sql = `INSERT INTO stored_prompts (name, text, response_format, additional_instructions, source, updated_at)
      VALUES (@name, @text, @responseFormat, @additionalInstructions, @source, @updatedAt)
      ON CONFLICT (name) DO ${overRemoved ? `UPDATE SET ${SET} WHERE stored_prompts.text IS NULL` : 'NOTHING'}`;
    return this.s.get(sql).run(row).changes > 0;
  }

  put(row: PromptRow): void {
    this.s
      .get(
        `INSERT INTO stored_prompts (name, text, response_format, additional_instructions, source, updated_at)
         VALUES (@name, @text, @responseFormat, @additionalInstructions, @source, @updatedAt)
         ON CONFLICT (name) DO UPDATE SET ${SET}`,
      )
      .run(row);
  }

  refresh(row: PromptRow): boolean {
    const sql = `UPDATE stored_prompts SET text = @text, response_format = @responseFormat, additional_instructions = @additionalInstructions,
      updated_at = @updatedAt WHERE name = @name AND text IS NOT NULL AND source = @source`;
    return this.s.get(sql).run(row).changes > 0;
  }

  remove(name: string, at: string): boolean {
    const sql = `UPDATE stored_prompts SET text = NULL, response_format = NULL, additional_instructions = NULL, source = NULL, updated_at = ?
      WHERE name = ? AND text IS NOT NULL`;
    return this.s.get(sql).run(at, name).changes > 0;
  }
}

const SET =
  'text = excluded.text, response_format = excluded.response_format, additional_instructions = excluded.additional_instructions, source = excluded.source, updated_at = excluded.updated_at';
const COLUMNS =
  'name, text, response_format AS responseFormat, additional_instructions AS additionalInstructions, source, updated_at AS updatedAt';
