import type { SearchTerms } from '../core/search-query.js';

/** The terms as an FTS5 MATCH expression: every clause quoted (words never hold a quote), all required. */
export function ftsMatch(terms: SearchTerms): string {
  return terms.clauses
    .map((c) => (c.kind === 'word' ? `"${c.word}"` : c.kind === 'prefix' ? `"${c.word}"*` : `"${c.words.join(' ')}"`))
    .join(' AND ');
}

/** The terms as a PostgreSQL tsquery: quoted lexemes (words never hold a quote or a backslash), all required. */
export function tsQuery(terms: SearchTerms): string {
  return terms.clauses
    .map((c) => (c.kind === 'word' ? `'${c.word}'` : c.kind === 'prefix' ? `'${c.word}':*` : `(${c.words.map((w) => `'${w}'`).join(' <-> ')})`))
    .join(' & ');
}
