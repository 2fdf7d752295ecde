/**
 * The search query language, shared by both stores: words, "quoted phrases" and prefix* words, all
 * of which must match (AND). Anything else is text: punctuation splits words the way both stores'
 * tokenizers do (letters and digits make a word), so ordinary input is never a syntax error.
 */

/** One thing every hit must contain. */
export type SearchClause =
  | { kind: 'word'; word: string }
  | { kind: 'prefix'; word: string }
  | { kind: 'phrase'; words: string[] };

export interface SearchTerms {
  clauses: SearchClause[];
}

/**
 * What is not space, punctuation or a control character makes words, as SQLite's unicode61
 * tokenizer sees them (PostgreSQL's parser agrees on letters and digits; see the README).
 */
const WORD = /[^\p{P}\p{Z}\p{C}\s]+/gu;

/** The words of `text`, lower-cased, as the stores' tokenizers see them. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.normalize('NFC'));
}

/** Parses what a person typed; no clause at all (only punctuation) is an empty list. */
export function parseSearch(query: string): SearchTerms {
  const clauses: SearchClause[] = [];
  // "a phrase", or a run of non-space characters (a word, possibly ending in *).
  for (const m of query.matchAll(/"([^"]*)"?|(\S+)/g)) {
    if (m[1] !== undefined) clauses.push(...phrase(wordsOf(m[1])));
    else clauses.push(...bare(m[2]!));
  }
  return { clauses };
}

function phrase(words: string[]): SearchClause[] {
  if (words.length === 0) return [];
  return words.length === 1 ? [{ kind: 'word', word: words[0]! }] : [{ kind: 'phrase', words }];
}

/** An unquoted token: `pre*` is a prefix; `don't` or `a-b` are the phrase of their words. */
function bare(token: string): SearchClause[] {
  const words = wordsOf(token);
  if (words.length === 0) return [];
  if (token.endsWith('*') && words.length === 1) return [{ kind: 'prefix', word: words[0]! }];
  return phrase(words);
}

/** How a hit's text shows its match: a piece of it around the first match, and where the matches are in that piece. */
export interface Snippet {
  snippet: string;
  /** [start, end) offsets of matched words in `snippet`. */
  highlights: Array<[number, number]>;
}

const SNIPPET_CHARS = 160;

/** The snippet of `text` for `terms`: about 160 characters around the first matched word, with every match marked. */
export function snippetOf(text: string, terms: SearchTerms): Snippet {
  const matches = matchedWords(text, terms);
  const first = matches[0]?.[0] ?? 0;
  let start = Math.max(0, first - Math.floor(SNIPPET_CHARS / 3));
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  start = Math.max(0, Math.min(start, end - SNIPPET_CHARS));
  // Whole words at both ends.
  if (start > 0) start = nextWordStart(text, start);
  if (end < text.length) end = previousWordEnd(text, end);
  const lead = start > 0 ? '…' : '';
  const body = text.slice(start, end).replace(/\s/g, ' ');
  const snippet = `${lead}${body}${end < text.length ? '…' : ''}`;
  const shift = lead.length - start;
  const highlights = matches.filter(([s, e]) => s >= start && e <= end).map(([s, e]): [number, number] => [s + shift, e + shift]);
  return { snippet, highlights };
}

/** [start, end) of each word in `text` a clause matches (a phrase marks each of its words). */
function matchedWords(text: string, terms: SearchTerms): Array<[number, number]> {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const c of terms.clauses) {
    if (c.kind === 'word') exact.add(c.word);
    else if (c.kind === 'prefix') prefixes.push(c.word);
    else c.words.forEach((w) => exact.add(w));
  }
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(WORD)) {
    const w = m[0].toLowerCase().normalize('NFC');
    if (exact.has(w) || prefixes.some((p) => w.startsWith(p))) out.push([m.index!, m.index! + m[0].length]);
  }
  return out;
}

function nextWordStart(text: string, i: number): number {
  const m = /\s\S/.exec(text.slice(i, i + 40));
  return m ? i + m.index + 1 : i;
}

function previousWordEnd(text: string, i: number): number {
  const back = text.slice(Math.max(0, i - 40), i);
  const k = back.search(/\S\s\S*$/);
  return k >= 0 ? i - back.length + k + 1 : i;
}

