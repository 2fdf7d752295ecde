/**
 * A schema migration as it runs, for a progress line: `version` of `total`, what it does (its
 * first comment line), and once done how long it took. `upgrade` is false on a new, empty database.
 */
export interface MigrationStep {
  version: number;
  total: number;
  what: string;
  upgrade: boolean;
  ms?: number;
}

/** A migration's first comment line up to its first colon, as a progress line names it (both stores write one). */
export function migrationTitle(sql: string): string {
  const m = /--\s*(.+)/.exec(sql);
  return m ? m[1]!.split(/:\s/)[0]!.replace(/[.:]\s*$/, '').trim() : 'the schema';
}
