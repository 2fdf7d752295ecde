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
 * tokenizer sees them (PostgreSQL's parser agrees on letters and digits; see docs/entities-and-memory.md#searching-transcripts-mgpt-search).
 */
const WORD = /[^\p{P}\p{Z}\p{C}\s]+/gu;

/** The words of `text`, lower-cased, as the stores' tokenizers see them. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.normalize('NFC'));
}

/**
 * The longest query a search or a recall takes. Words take two characters at least (one and a
 * space), so a query has at most 500 clauses, and its SQL stays a few kilobytes: the stores' cost
 * for a long AND grows faster than its length (FTS5 took 0.8 s for 21,845 clauses).
 */
export const SEARCH_QUERY_MAX_CHARS = 1000;

/** Parses what a person typed; no clause at all (only punctuation) is an empty list. A clause said twice counts once. */
export function parseSearch(query: string): SearchTerms {
  const clauses = new Map<string, SearchClause>();
  // "a phrase", or a run of non-space characters (a word, possibly ending in *).
  for (const m of query.matchAll(/"([^"]*)"?|(\S+)/g)) {
    for (const c of m[1] !== undefined ? phrase(wordsOf(m[1])) : bare(m[2]!)) clauses.set(JSON.stringify(c), c);
  }
  return { clauses: [...clauses.values()] };
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

/**
 * Cuts snippets for one query: its terms are compiled once, then each hit's text is read at most
 * once, natively, up to its first match, and only ~160 characters around it are worked on. A
 * message of megabytes costs about what a short one does (the whole text used to be
 * tokenized and compared with every term, on the event loop).
 */
export function snippetMaker(terms: SearchTerms): (text: string) => Snippet {
  const marks = wordsToMark(terms);
  const first = firstMatchPattern(marks);
  return (text) => snippetAt(text, first?.exec(text)?.index ?? 0, marks);
}

/** The snippet of `text` for `terms`: about 160 characters around the first matched word, with every match marked. */
export function snippetOf(text: string, terms: SearchTerms): Snippet {
  return snippetMaker(terms)(text);
}

function snippetAt(text: string, first: number, marks: Marks): Snippet {
  const [start, end] = windowAround(text, first);
  const lead = start > 0 ? '…' : '';
  const body = text.slice(start, end).replace(/\s/g, ' ');
  const snippet = `${lead}${body}${end < text.length ? '…' : ''}`;
  const shift = lead.length - start;
  const highlights = matchedWordsWithin(text, start, end, marks).map(([s, e]): [number, number] => [s + shift, e + shift]);
  return { snippet, highlights };
}

/** [start, end) of about SNIPPET_CHARS around `first`, a third of them before it, at whole words. */
function windowAround(text: string, first: number): [number, number] {
  let start = Math.max(0, first - Math.floor(SNIPPET_CHARS / 3));
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  start = Math.max(0, Math.min(start, end - SNIPPET_CHARS));
  if (start > 0) start = nextWordStart(text, start);
  if (end < text.length) end = previousWordEnd(text, end);
  return [start, end];
}

/**
 * The matches that lie wholly in [start, end) of `text`, found in that piece and two characters
 * either side: enough to see whether a word there goes on past an edge (a surrogate pair is two).
 */
function matchedWordsWithin(text: string, start: number, end: number, marks: Marks): Array<[number, number]> {
  const from = Math.max(0, start - 2);
  return matchedWords(text.slice(from, Math.min(text.length, end + 2)), marks)
    .map(([s, e]): [number, number] => [s + from, e + from])
    .filter(([s, e]) => s >= start && e <= end);
}

/** [start, end) of each word in `text` a clause matches (a phrase marks each of its words). */
function matchedWords(text: string, { exact, prefixes }: Marks): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(WORD)) {
    const w = m[0].toLowerCase().normalize('NFC');
    if (exact.has(w) || prefixes.some((p) => w.startsWith(p))) out.push([m.index!, m.index! + m[0].length]);
  }
  return out;
}

/** The words a match is marked on: whole words (a phrase's each), and prefixes. */
interface Marks {
  exact: Set<string>;
  prefixes: string[];
}

function wordsToMark(terms: SearchTerms): Marks {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const c of terms.clauses) {
    if (c.kind === 'word') exact.add(c.word);
    else if (c.kind === 'prefix') prefixes.push(c.word);
    else c.words.forEach((w) => exact.add(w));
  }
  return { exact, prefixes };
}

/** A word character (see WORD): none may come before a match, nor after an exact word. */
const WORD_CHAR = '[^\\p{P}\\p{Z}\\p{C}\\s]';

/**
 * One regular expression for the first matched word, or none for no terms. Its words are a trie
 * of alternatives, so at each word's start it follows one branch character by character: a scan
 * costs about the text's length, however many terms share a beginning (250 flat alternatives
 * starting alike were tried one by one, ~35 ms per 0.4 MB).
 */
function firstMatchPattern({ exact, prefixes }: Marks): RegExp | undefined {
  if (!exact.size && !prefixes.length) return undefined;
  const root: TrieNode = { next: new Map() };
  for (const w of exact) addWord(root, w, 'word');
  for (const p of prefixes) addWord(root, p, 'prefix');
  return new RegExp(`(?<!${WORD_CHAR})${alternativesOf(root)}`, 'iu');
}

interface TrieNode {
  next: Map<string, TrieNode>;
  /** A word ends here (it must be followed by an edge), or a prefix does (anything may follow). */
  ends?: 'word' | 'prefix';
}

function addWord(root: TrieNode, word: string, ends: 'word' | 'prefix'): void {
  let node = root;
  for (const ch of word) {
    let next = node.next.get(ch);
    if (!next) node.next.set(ch, (next = { next: new Map() }));
    node = next;
  }
  if (ends === 'prefix' || !node.ends) node.ends = ends;
}

/** The node's words as a pattern; a prefix that ends here already matches all that go on from it. */
function alternativesOf(node: TrieNode): string {
  if (node.ends === 'prefix') return '';
  const alternatives = [...node.next].map(([ch, next]) => escapeChar(ch) + alternativesOf(next));
  if (node.ends === 'word') alternatives.push(`(?!${WORD_CHAR})`);
  return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join('|')})`;
}

/** Words hold no space or punctuation, but may hold symbols the pattern syntax uses (`$`, `+`, `|`...). */
function escapeChar(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
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

