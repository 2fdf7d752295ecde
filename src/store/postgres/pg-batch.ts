import type { QueryResultRow } from 'pg';
import type { Queryable } from './pg-db.js';

interface Statement {
  text: string;
  values: unknown[];
}

/**
 * Writes whose results nobody reads, collected and then sent as one statement: each becomes a
 * data-modifying CTE (`WITH w1 AS (INSERT ...), w2 AS (UPDATE ...) SELECT 1`). A turn's commit is
 * otherwise a round trip per row kind (messages, blocks, counters, ledger, balance, log), each one
 * holding the pooled connection and the entity's locks while it waits on the network; as one
 * statement they run in one round trip, all or nothing.
 *
 * The parts see one snapshot and not each other's rows, so they must be independent: no part may
 * read what another writes, and no two may change the same row (PostgreSQL leaves that order
 * undefined), and a row one part deletes still holds its unique keys while another inserts (a
 * block deleted to make room for one at its position goes in a statement before). Inserting a
 * ledger row and moving the balance it references is fine.
 */
export class StatementBatch implements Queryable {
  private readonly parts: Statement[] = [];

  /** Collects the statement; it runs at `send`. Answers no rows: a part's result cannot be read. */
  query<R extends QueryResultRow = QueryResultRow>(text: string, values: unknown[] = []): Promise<{ rows: R[]; rowCount: number | null }> {
    this.parts.push({ text, values });
    return Promise.resolve({ rows: [], rowCount: null });
  }

  /** Runs what was collected on `q` (nothing when empty; a lone statement as it is). */
  async send(q: Queryable): Promise<void> {
    const [first, ...rest] = this.parts.splice(0);
    if (!first) return;
    if (!rest.length) {
      await q.query(first.text, first.values);
      return;
    }
    const values: unknown[] = [];
    const ctes = [first, ...rest].map((s, i) => {
      const offset = values.length;
      values.push(...s.values);
      return `w${i} AS (${renumber(s.text, offset)})`;
    });
    await q.query(`WITH ${ctes.join(', ')} SELECT 1`, values);
  }
}

/** `$1` becomes `$<1 + offset>`; the statements given here hold no quoted text with a `$` in it. */
function renumber(text: string, offset: number): string {
  return offset ? text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`) : text;
}
