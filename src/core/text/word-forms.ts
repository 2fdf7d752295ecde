/**
 * Other forms of a question's words, so recall finds a message that says the same thing in
 * another form: irregular forms (drew for drawing, bought for buy, children for child, through
 * WordNet's morphy as wink-lemmatizer implements it and WordNet's tables of irregular forms), a
 * few derivations onto a base word (mentorship to mentor, photography to photograph, teacher to
 * teach), and compounds written apart or together (roadtrip and road trip, book shelf and
 * bookshelf). The stores stem every form as they stem the messages, so regular inflections
 * (drawing, draws) already meet.
 */
import type { Lexicon } from './lexicon-table.js';

/** One thing a question asks about: the forms any of which a message may use. */
export interface QueryTerm {
  /** The question's word (or two adjacent words joined). */
  word: string;
  /** The word itself first, then its other forms: words, or two words and a space (a phrase). */
  forms: string[];
}

/** The most forms one term searches for: each is a clause of its store query. */
const FORMS_MAX = 8;
/** The shortest word joined with its neighbour into a compound. */
const PART_MIN = 3;
/** The shortest part a word is split into. */
const SPLIT_PART_MIN = 4;

/**
 * Endings that make a word from another (the base must be in the lexicon, and be a verb for
 * -er, a noun for -y): the stores' stemmers keep them (Porter leaves -ship, -hood, -y).
 */
const DERIVATIONS: ReadonlyArray<{ suffix: string; base: (lex: Lexicon, w: string) => boolean; min: number }> = [
  { suffix: 'ship', base: (lex, w) => lex.isWord(w), min: 4 },
  { suffix: 'hood', base: (lex, w) => lex.isWord(w), min: 4 },
  { suffix: 'ness', base: (lex, w) => lex.isWord(w), min: 4 },
  { suffix: 'er', base: (lex, w) => lex.isVerb(w), min: 4 },
  { suffix: 'y', base: (lex, w) => lex.isNoun(w), min: 5 },
];

/**
 * The terms of a question's words (in the question's order): each word with its forms, then each
 * two adjacent words joined (a compound the question wrote apart).
 */
export function queryTerms(lex: Lexicon | undefined, words: readonly string[]): QueryTerm[] {
  const terms: QueryTerm[] = words.map((w) => ({ word: w, forms: lex ? formsOf(lex, w) : [w] }));
  for (let i = 0; i + 1 < words.length; i++) {
    const [a, b] = [words[i]!, words[i + 1]!];
    if (a.length >= PART_MIN && b.length >= PART_MIN && !/\d/.test(a + b)) terms.push({ word: a + b, forms: [a + b] });
  }
  return terms;
}

/** The word, its lemmas and their irregular forms, a derivation's base, and the word split in two. */
export function formsOf(lex: Lexicon, word: string): string[] {
  const out = new Set([word]);
  const add = (base: string) => {
    out.add(base);
    for (const f of lex.irregular(base)) out.add(f);
  };
  for (const lemma of lex.lemmas(word)) add(lemma);
  for (const base of derivedFrom(lex, word)) add(base);
  const split = compoundSplit(lex, word);
  if (split) out.add(split);
  return [...out].filter((f) => /^[\p{L}\p{N}]+( [\p{L}\p{N}]+)?$/u.test(f)).slice(0, FORMS_MAX);
}

function derivedFrom(lex: Lexicon, word: string): string[] {
  const out: string[] = [];
  for (const d of DERIVATIONS) {
    if (!word.endsWith(d.suffix)) continue;
    const stem = word.slice(0, -d.suffix.length);
    for (const base of [stem, `${stem}e`]) if (base.length >= d.min && d.base(lex, base)) out.push(base);
  }
  return out;
}

/**
 * A word that is two lexicon words written together (roadtrip, skateboarding: a base word and a
 * word whose lemma is one), as a phrase; the longest first part wins.
 */
function compoundSplit(lex: Lexicon, word: string): string | undefined {
  if (word.length < 2 * SPLIT_PART_MIN) return undefined;
  for (let i = word.length - SPLIT_PART_MIN; i >= SPLIT_PART_MIN; i--) {
    const [head, tail] = [word.slice(0, i), word.slice(i)];
    if (lex.isWord(head) && lex.lemmas(tail).some((t) => lex.isWord(t))) return `${head} ${tail}`;
  }
  return undefined;
}

let lexicon: Promise<Lexicon | undefined> | undefined;

/**
 * The lexicon, loaded once on first use (about 0.1 s from the built CLI's compact bundle). A
 * lexicon that cannot load leaves the words as they are: recall still finds their stems.
 */
export function loadLexicon(): Promise<Lexicon | undefined> {
  lexicon ??= import('./lexicon-table.js').then(
    (m) => m.openLexicon(),
    () => undefined,
  );
  return lexicon;
}
