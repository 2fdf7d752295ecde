/**
 * WordNet's English lexicon as wink-lemmatizer ships it: the lemmatizer (WordNet's morphy), the
 * base words with their senses, and the irregular forms. Recall uses it to join a question's
 * words with other forms of them (word-forms.ts).
 *
 * The CLI loads this module as its own bundle (dist/lexicon.cjs), built by scripts/build.mjs with
 * the lexicon's tables rewritten as data that loads in about a tenth of the time the package's
 * own modules take (77,000 property assignments, ~0.5 s); it hands back only strings, numbers and
 * plain functions, so no class crosses between bundles.
 */
import lemmatize from 'wink-lemmatizer';
import data from './lexicon-data.cjs';

const { words, senses, verbExceptions, nounExceptions, adjectiveExceptions } = data;

export interface Lexicon {
  /** The base forms of `word` as a verb, a noun and an adjective (itself when it has none). */
  lemmas(word: string): string[];
  /** Whether `word` is a base word of the lexicon. */
  isWord(word: string): boolean;
  /** Whether `word` is a base word with a verb sense. */
  isVerb(word: string): boolean;
  /** Whether `word` is a base word with a noun sense. */
  isNoun(word: string): boolean;
  /** The irregular forms whose base form is `lemma` (drew and drawn for draw, children for child). */
  irregular(lemma: string): readonly string[];
}

/** WordNet's lexicographer files: 3-28 hold nouns, 29-43 verbs. */
const NOUN_SENSES = [3, 28];
const VERB_SENSES = [29, 43];

function hasSense(word: string, [lo, hi]: number[]): boolean {
  const i = words[word];
  if (i === undefined) return false;
  return (senses[i] ?? []).some((s) => s >= lo! && s <= hi!);
}

export function openLexicon(): Lexicon {
  const inverse = new Map<string, string[]>();
  for (const table of [verbExceptions, nounExceptions, adjectiveExceptions]) {
    for (const form of Object.keys(table)) {
      const base = table[form]!;
      const forms = inverse.get(base) ?? [];
      if (!forms.includes(form)) forms.push(form);
      inverse.set(base, forms);
    }
  }
  return {
    lemmas: (w) => [...new Set([lemmatize.verb(w), lemmatize.noun(w), lemmatize.adjective(w)])],
    isWord: (w) => words[w] !== undefined,
    isVerb: (w) => hasSense(w, VERB_SENSES),
    isNoun: (w) => hasSense(w, NOUN_SENSES),
    irregular: (lemma) => inverse.get(lemma) ?? [],
  };
}
