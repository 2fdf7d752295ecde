import type { SearchTerms } from '../core/text/search-query.js';

/** The terms as an FTS5 MATCH expression: every clause quoted (words never hold a quote), all required. */
export function ftsMatch(terms: SearchTerms): string {
  return terms.clauses
    .map((c) => (c.kind === 'word' ? `"${c.word}"` : c.kind === 'prefix' ? `"${c.word}"*` : `"${c.words.join(' ')}"`))
    .join(' AND ');
}

/**
 * Clauses an SQLite hit is ranked by. bm25's work on a row is its matches times the query's
 * phrases (FTS5 merges every phrase's positions, looking at all phrases for each match): 250
 * prefixes over six 0.4 MB messages took 0.3 s on the event loop. A longer query still
 * needs all its clauses; it is ranked by its first ones.
 */
export const FTS_RANKED_CLAUSES = 16;

/**
 * An FTS5 search of `table`: `MATCH @rank` (the clauses ranked by) and, for a longer query, a
 * filter to the rows that match all (`@match`). `params` binds both.
 */
export function ftsSearch(table: string, terms: SearchTerms): { where: string; params: { rank: string; match: string } } {
  const match = ftsMatch(terms);
  if (terms.clauses.length <= FTS_RANKED_CLAUSES) return { where: `${table} MATCH @rank`, params: { rank: match, match } };
  const rank = ftsMatch({ clauses: terms.clauses.slice(0, FTS_RANKED_CLAUSES) });
  return { where: `${table} MATCH @rank AND ${table}.rowid IN (SELECT rowid FROM ${table} WHERE ${table} MATCH @match)`, params: { rank, match } };
}

/** Any of the words as an FTS5 MATCH expression: each quoted (words never hold a quote), the tokenizer stems them. */
export function ftsAny(words: string[]): string {
  return words.map((w) => `"${w}"`).join(' OR ');
}

/** Any of the words as a PostgreSQL tsquery for to_tsquery('english', …), which stems them and drops its stop words. */
export function tsAny(words: string[]): string {
  return words.map((w) => `'${w}'`).join(' | ');
}

/** The terms as a PostgreSQL tsquery: quoted lexemes (words never hold a quote or a backslash), all required. */
export function tsQuery(terms: SearchTerms): string {
  return terms.clauses
    .map((c) => (c.kind === 'word' ? `'${c.word}'` : c.kind === 'prefix' ? `'${c.word}':*` : `(${c.words.map((w) => `'${w}'`).join(' <-> ')})`))
    .join(' & ');
}

/** A term's forms as an FTS5 MATCH expression: any of them, a phrase quoted whole (forms are letters, digits and spaces). */
export function ftsForms(forms: readonly string[]): string {
  return forms.map((f) => `"${f}"`).join(' OR ');
}

/** A term's forms as a tsquery for to_tsquery('english', …): any of them, a phrase as adjacent lexemes. */
export function tsForms(forms: readonly string[]): string {
  return forms.map((f) => (f.includes(' ') ? `(${f.split(' ').map((w) => `'${w}'`).join(' <-> ')})` : `'${f}'`)).join(' | ');
}
