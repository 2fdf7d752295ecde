import { wordsOf } from './search-query.js';

/**
 * Ranked recall: what of a question is worth searching an entity's transcript for. No
 * storage here: the stores stem the words (FTS5 porter, PostgreSQL's english configuration) and rank.
 */

/** An entity's recall mode: off, the `recall` tool the model may call, or automatic recall before each turn. */
export type RecallMode = 'off' | 'tool' | 'auto';
export const RECALL_MODES: readonly RecallMode[] = ['off', 'tool', 'auto'];

/** A new entity's mode when none is given. */
export const DEFAULT_RECALL_MODE: RecallMode = 'auto';

/** The most automatic recall adds to a turn's prompt, in tokens, unless configured (engine.recallTokens). */
export const DEFAULT_RECALL_TOKENS = 1000;

/** How many words of a question are searched for at most: a long message keeps its rarest-looking ones. */
export const RECALL_WORDS_MAX = 16;

/**
 * Words that never match alone: English function words and the small talk of a chat, which
 * would otherwise find every earlier "thanks" or "remember". A question made only of them recalls
 * nothing, so its turn sends exactly the prompt it would without recall.
 */
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are aren as at be because been before being below between both but by can cannot could ' +
    'did do does doing don down during each else ever few for from further get got had has have having he her here hers herself him himself his how ' +
    'i if in into is isn it its itself just let me more most much must my myself no nor not now of off on once only or other ought our ours ' +
    'ourselves out over own please same shall she should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up upon us very was wasn we were weren what when where which while who whom whose why will with within without ' +
    'would yes yet you your yours yourself yourselves ' +
    "hi hello hey thanks thank ok okay sure well oh ah really maybe one two thing things something anything everything nothing " +
    'know think remember recall tell said say says told ask asked mention mentioned talk talked again still even already ' +
    'll re ve d s t m'
  ).split(' '),
);

/**
 * Words by which a question points back at what was just said ("where does she live now?", "how
 * much was it?"): only such a question needs the previous message's words to know its subject.
 */
const REFERRING_WORDS = new Set('he him his she her hers they them their theirs it its that those there then'.split(' '));

/** Whether `text` leans on what was said just before it: one of its words points back. */
export function refersBack(text: string): boolean {
  return wordsOf(text).some((w) => REFERRING_WORDS.has(w));
}

/** The words of `text` worth searching for: lower-cased, no stop words, no repeats, at most RECALL_WORDS_MAX. */
export function contentWords(text: string): string[] {
  // Longer words are likelier to be rare (names, places, things): kept first when there are too many.
  return questionWords(text).sort((a, b) => b.length - a.length).slice(0, RECALL_WORDS_MAX);
}

/**
 * The words of `text` worth searching for, in the order written (so two adjacent ones can be read
 * as one compound): lower-cased, no stop words, no repeats; a long text keeps its
 * RECALL_WORDS_MAX longest.
 */
export function questionWords(text: string): string[] {
  const seen = new Set<string>();
  for (const w of wordsOf(text)) {
    if (STOP_WORDS.has(w) || w.length < 2 || seen.has(w)) continue;
    seen.add(w);
  }
  const words = [...seen];
  if (words.length <= RECALL_WORDS_MAX) return words;
  const kept = new Set([...words].sort((a, b) => b.length - a.length).slice(0, RECALL_WORDS_MAX));
  return words.filter((w) => kept.has(w));
}
