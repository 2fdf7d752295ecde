import { contentWords, refersBack } from '../../core/text/recall-query.js';
import { type TokenEstimator, loadTokenEstimator } from '../../core/text/tokens.js';
import type { EntityRow, MessageHit, MessageRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';

/** What retrieval reads: the store. */
type RetrieveDeps = Pick<EngineDeps, 'store'>;

/**
 * The one ranked retriever over an entity's transcript (issue 32): automatic recall, the recall
 * tool and `mgpt search --any` ask it. Any word of the query, by its stem, ranked by the store's
 * own relevance; each hit brings the other half of its exchange; what the live window shows is
 * never repeated; the results fill a token budget, most relevant first, and read in transcript
 * order.
 */

/** One message put in front of the model. */
export interface RecalledMessage {
  seq: number;
  role: 'user' | 'assistant';
  /** Its line's tokens, as the prompt counts them. */
  tokens: number;
}

export interface Retrieved {
  /** The lines `#seq role (date): text`, in transcript order; '' when nothing was found. */
  text: string;
  /** Estimated tokens of `text`. */
  tokens: number;
  messages: RecalledMessage[];
}

export interface RetrieveOptions {
  /** Only messages before this seq: the window's first live message. */
  beforeSeq?: number;
  /** The most the lines may take, in estimated tokens. */
  budgetTokens: number;
  /** What the conversation was just about (the previous user message), added to a short question's words. */
  context?: string;
}

/** Hits a retrieval ranks before it fills the budget. */
const CANDIDATES = 12;
/** A question with fewer content words than this takes the previous exchange's words too. */
const SHORT_QUESTION_WORDS = 3;

export const NOTHING_RETRIEVED: Retrieved = { text: '', tokens: 0, messages: [] };

export async function retrieve(deps: RetrieveDeps, entity: EntityRow, query: string, opts: RetrieveOptions): Promise<Retrieved> {
  if (opts.budgetTokens <= 0) return NOTHING_RETRIEVED;
  const words = await rarest(deps, queryWords(query, opts.context));
  if (!words.length) return NOTHING_RETRIEVED;
  const hits = relevant(await deps.store.entities.searchAny({ accountId: entity.accountId, words, entityIds: [entity.id], beforeSeq: opts.beforeSeq, limit: CANDIDATES }));
  if (!hits.length) return NOTHING_RETRIEVED;
  const partners = await partnersOf(deps, entity.id, hits, opts.beforeSeq);
  return fill(await loadTokenEstimator(), hits, partners, opts.budgetTokens);
}

/**
 * The question's rarest words whose matches together stay within MATCHES_RANKED: ranking scores
 * every message a word matches (bm25 or ts_rank_cd), so a word found in thousands of messages
 * made a turn cost tens of milliseconds (issue 32: 23-35 ms over 20,000 messages, for 2 allowed)
 * while telling little about which message is meant. A question whose every word is that common
 * recalls nothing.
 */
async function rarest(deps: RetrieveDeps, words: string[]): Promise<string[]> {
  if (words.length === 0) return words;
  const counts = await deps.store.entities.wordMatches(words, MATCHES_RANKED + 1);
  const byCount = words.map((w, i) => ({ w, n: counts[i] ?? 0 })).filter((x) => x.n > 0).sort((a, b) => a.n - b.n);
  const kept: string[] = [];
  let total = 0;
  for (const { w, n } of byCount) {
    if (total + n > MATCHES_RANKED) break;
    kept.push(w);
    total += n;
  }
  return kept;
}

/** The most matches one retrieval ranks (about a millisecond of SQLite's bm25). */
const MATCHES_RANKED = 1000;

/**
 * The question's content words; a short one that points back ("what was her job?") takes the
 * previous exchange's after its own. A short question with its own subject ("when did I stop
 * smoking?") keeps to it: the previous message's words would outnumber its own and find that
 * message's topic instead (the memory bench lost a fifth of its questions so).
 */
function queryWords(query: string, context: string | undefined): string[] {
  const own = contentWords(query);
  if (own.length >= SHORT_QUESTION_WORDS || !context || !refersBack(query)) return own;
  return [...new Set([...own, ...contentWords(context)])].slice(0, 2 * SHORT_QUESTION_WORDS + own.length);
}

/**
 * The hits close enough to the best one: a message that shares only a common word with the
 * question ranks far below one that shares its names and things, and would only crowd the prompt.
 * Relative, so it holds on either store's scale.
 */
function relevant(hits: MessageHit[]): MessageHit[] {
  const best = hits[0]?.score;
  if (best === undefined || !(best > 0)) return hits;
  return hits.filter((h) => (h.score ?? 0) >= best * RELATIVE_FLOOR);
}

/** A hit's least share of the best hit's score. */
const RELATIVE_FLOOR = 0.35;

/** The other half of each hit's exchange (a user message's reply, a reply's message), before the live window. */
async function partnersOf(deps: RetrieveDeps, entityId: string, hits: MessageHit[], beforeSeq: number | undefined): Promise<Map<number, MessageRow>> {
  const have = new Set(hits.map((h) => h.seq));
  const seqs = hits.map(partnerSeq).filter((s) => s >= 1 && (beforeSeq === undefined || s < beforeSeq) && !have.has(s));
  const rows = seqs.length ? await deps.store.entities.messagesAt(entityId, [...new Set(seqs)]) : [];
  return new Map(rows.map((r) => [r.seq, r]));
}

/** A turn stores its user message at an odd seq and the reply after it. */
function partnerSeq(m: MessageRow): number {
  return m.role === 'user' ? m.seq + 1 : m.seq - 1;
}

/** The hits (each with its partner) most relevant first, while the budget lasts; read in seq order. */
function fill(tok: TokenEstimator, hits: MessageHit[], partners: Map<number, MessageRow>, budget: number): Retrieved {
  const chosen = new Map<number, { row: MessageRow; line: string; tokens: number }>();
  let used = 0;
  const take = (row: MessageRow): boolean => {
    if (chosen.has(row.seq)) return true;
    const whole = lineOf(row);
    const room = budget - used - 1;
    const line = tok.count(whole) <= room ? whole : room >= MIN_TRUNCATED ? tok.truncate(whole, room) : '';
    if (!line) return false;
    const tokens = tok.count(line) + 1;
    chosen.set(row.seq, { row, line, tokens });
    used += tokens;
    return true;
  };
  const bySeq = new Map<number, MessageRow>([...partners, ...hits.map((h): [number, MessageRow] => [h.seq, h])]);
  for (const hit of hits) {
    if (!take(hit)) continue;
    const partner = bySeq.get(partnerSeq(hit));
    if (partner) take(partner);
  }
  const picked = [...chosen.values()].sort((a, b) => a.row.seq - b.row.seq);
  return {
    text: picked.map((p) => p.line).join('\n'),
    tokens: used,
    messages: picked.map((p) => ({ seq: p.row.seq, role: p.row.role, tokens: p.tokens })),
  };
}

/** The least of a cut message worth sending. */
const MIN_TRUNCATED = 12;

/** One recalled message as the model reads it: its number, who said it, and when (to the minute). */
function lineOf(m: MessageRow): string {
  return `#${m.seq} ${m.role} (${m.createdAt.slice(0, 16).replace('T', ' ')}): ${m.content}`;
}
