import { questionWords, refersBack } from '../../core/text/recall-query.js';
import { type TokenEstimator, loadTokenEstimator } from '../../core/text/tokens.js';
import { loadLexicon, queryTerms } from '../../core/text/word-forms.js';
import type { EntityRow, MessageRow, TermMatch } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { type EntityStats, type RankedSeq, rankMatches } from './recall-rank.js';
import { fuseRankings } from './semantic/vector-rank.js';

/** What retrieval reads: the store (and the matches it keeps, for `keep`), and the vectors where the entity's route has embeddings. */
type RetrieveDeps = Pick<EngineDeps, 'store'> & Partial<Pick<EngineDeps, 'termMatches' | 'semantic'>>;

/**
 * The one ranked retriever over an entity's transcript: automatic recall and the recall tool ask
 * it. Any word of the query, in any of its forms (word-forms.ts), ranked by BM25 with the entity's
 * own statistics (recall-rank.ts); where the entity's route has embeddings, fused with the messages
 * nearest the query in meaning (semantic/); each hit brings the message before and after it, so an answer
 * given in the reply to what the question's words match comes with it; what the live window shows
 * is never repeated; the results fill the token budget, most relevant first, and read in
 * transcript order, each line with the date its message was written.
 */

/** One message put in front of the model. */
export interface RecalledMessage {
  seq: number;
  role: 'user' | 'assistant';
  /** Its line's tokens, as the prompt counts them. */
  tokens: number;
  /** Its text as the line carries it (cut when the budget cut the line), without the line's `#seq role (date): ` head. */
  content: string;
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
  /** Seqs already in front of the model (recalled by an earlier turn still in view): never returned again. */
  inView?: ReadonlySet<number>;
  /** Keep the terms' matches before `beforeSeq` for the next turns (only for an entity the store holds, not one a turn is creating). */
  keep?: boolean;
}

/** A question with fewer content words than this takes the previous exchange's words too. */
const SHORT_QUESTION_WORDS = 3;
/**
 * The most matches of one term that are ranked: ranking reads every match of every term (each a
 * row of the index joined to its message: two such terms at 1,000 took 2-7 ms on a loaded 2-core
 * machine, half that at 500), so this bounds a retrieval's cost; a term matching more of the
 * entity's messages says little about which one is meant and is left out.
 */
const TERM_MATCHES_MAX = 500;

export const NOTHING_RETRIEVED: Retrieved = { text: '', tokens: 0, messages: [] };

export async function retrieve(deps: RetrieveDeps, entity: EntityRow, query: string, opts: RetrieveOptions): Promise<Retrieved> {
  if (opts.budgetTokens <= 0) return NOTHING_RETRIEVED;
  const hits = await rankAll(deps, entity, query, opts);
  if (!hits.length) return NOTHING_RETRIEVED;
  const order = byPriority(hits).filter((s) => s >= 1 && (opts.beforeSeq === undefined || s < opts.beforeSeq) && !opts.inView?.has(s));
  const hitSeqs = new Set(hits.map((h) => h.seq));
  const lines = new Lines(await loadTokenEstimator(), opts.budgetTokens, hitSeqs);
  const meanLine = meanTokens(entity) + LINE_HEAD_TOKENS;
  const perRead = Math.ceil(opts.budgetTokens / meanLine) + READ_SLACK;
  // Read in priority order, a budget's worth of rows at a time (usually one read), until less than a line's room is left.
  let rest = order;
  while (rest.length && lines.left() >= Math.min(meanLine, MIN_TRUNCATED * 2)) {
    // Under a line's room a neighbour rarely fits while a hit is cut to it: reading every neighbour
    // to find that out took most of a turn's recall when earlier turns' recall held the hits in view.
    if (lines.left() < meanLine) rest = rest.filter((s) => hitSeqs.has(s));
    const seqs = rest.slice(0, perRead);
    if (!seqs.length) break;
    rest = rest.slice(perRead);
    const rows = new Map((await deps.store.entities.messagesAt(entity.id, seqs)).map((r) => [r.seq, r]));
    for (const seq of seqs) if (lines.left() >= MIN_TRUNCATED) lines.take(rows.get(seq));
  }
  return lines.result();
}

/**
 * The messages the query finds, most relevant first: by its words, and where the route has
 * embeddings, fused with the VECTOR_HITS nearest it in meaning (reciprocal rank fusion), so a
 * question that shares no word with what it asks about can still find it. Without embeddings, or
 * when the provider failed to embed the question, the words' ranking as it is.
 */
async function rankAll(deps: RetrieveDeps, entity: EntityRow, query: string, opts: RetrieveOptions): Promise<RankedSeq[]> {
  const words = queryWords(query, opts.context);
  const [byWords, byMeaning] = await Promise.all([
    words.length ? rank(deps, entity, words, opts.keep ? opts.beforeSeq : undefined, opts.beforeSeq) : [],
    deps.semantic?.rank(entity, query, opts.beforeSeq, VECTOR_HITS),
  ]);
  return byMeaning?.length ? fuseRankings([byWords, byMeaning]) : byWords;
}

/**
 * The most messages the meaning ranking brings to the fusion. It ranks every message with a
 * vector, the unrelated ones too; each hit brings its neighbours, so a few fill a budget.
 */
const VECTOR_HITS = 5;

/** The entity's messages the words' terms match, most relevant first. */
async function rank(deps: RetrieveDeps, entity: EntityRow, words: string[], keepBefore: number | undefined, beforeSeq: number | undefined): Promise<RankedSeq[]> {
  const terms = queryTerms(await loadLexicon(), words).map((t) => t.forms);
  const matches = keepBefore !== undefined && deps.termMatches
    ? await keptMatches(deps.store, deps.termMatches, entity, terms, keepBefore)
    : await deps.store.entities.termMatches({ entityId: entity.id, terms, beforeSeq, cap: TERM_MATCHES_MAX });
  return rankMatches(matches, statsOf(entity, beforeSeq));
}

/**
 * Each term's matches before `beforeSeq`, the ones read before kept: a transcript only grows at
 * its end, so what matches before a window's first live message never changes while the window
 * starts there, and the next turns' questions, on the same topic, ask for the same words (most of
 * what recall added to a turn at 20,000 messages was these reads). Kept by the entity's creation
 * time too: an id that was deleted and imported again is another transcript.
 */
async function keptMatches(store: EngineDeps['store'], cache: EngineDeps['termMatches'], entity: EntityRow, terms: string[][], beforeSeq: number): Promise<Array<TermMatch[] | null>> {
  const keyOf = (forms: string[]) => `${entity.id} ${beforeSeq} ${forms.join('|')}`;
  const kept = terms.map((forms) => cache.get(keyOf(forms), entity.createdAt));
  const missing = terms.filter((_, i) => !kept[i]);
  const read = missing.length ? await store.entities.termMatches({ entityId: entity.id, terms: missing, beforeSeq, cap: TERM_MATCHES_MAX }) : [];
  missing.forEach((forms, i) => cache.set(keyOf(forms), entity.createdAt, read[i]!));
  let next = 0;
  return terms.map((_, i) => (kept[i] ? kept[i]!.value : read[next++]!));
}

function meanTokens(entity: EntityRow): number {
  return entity.transcriptMessages ? entity.transcriptTokens / entity.transcriptMessages : 1;
}

/** The messages before the window and their mean length (from the entity's counters: no query). */
function statsOf(entity: EntityRow, beforeSeq: number | undefined): EntityStats {
  const messages = beforeSeq === undefined ? entity.transcriptMessages : Math.min(entity.transcriptMessages, beforeSeq - 1);
  return { messages: Math.max(1, messages), meanTokens: meanTokens(entity) };
}

/**
 * The question's content words, in its order; a short one that points back ("what was her job?")
 * takes the previous exchange's after its own. A short question with its own subject ("when did
 * I stop smoking?") keeps to it: the previous message's words would outnumber its own and find
 * that message's topic instead (the memory bench lost a fifth of its questions so).
 */
function queryWords(query: string, context: string | undefined): string[] {
  const own = questionWords(query);
  if (own.length >= SHORT_QUESTION_WORDS || !context || !refersBack(query)) return own;
  return [...new Set([...own, ...questionWords(context)])].slice(0, 2 * SHORT_QUESTION_WORDS + own.length);
}

/** The recalled lines, taken while the budget lasts (a message already taken is not taken again); read in seq order. */
class Lines {
  private readonly chosen = new Map<number, { row: MessageRow; line: string; tokens: number }>();
  private used = 0;
  constructor(
    private readonly tok: TokenEstimator,
    private readonly budget: number,
    /** The hits: a hit too long for the room is cut to it, a neighbour is left for a shorter line. */
    private readonly hits: ReadonlySet<number>,
  ) {}

  /** The tokens a next line may take. */
  left(): number {
    return this.budget - this.used - 1;
  }

  /** Adds the message's line; a hit longer than the room is cut to it. */
  take(row: MessageRow | undefined): void {
    if (!row || this.chosen.has(row.seq)) return;
    const room = this.left();
    const head = headOf(row);
    // The stored count of the message and the head's own: the message is not tokenized again.
    const whole = headTokens(this.tok, row, head) + row.tokens;
    if (whole > room && !this.hits.has(row.seq)) return;
    const line = whole <= room ? head + row.content : this.tok.truncate(head + row.content, room);
    // A line cut inside its head would carry none of the message.
    if (row.content && !lineContent(head, line)) return;
    const tokens = (whole <= room ? whole : this.tok.count(line)) + 1;
    this.chosen.set(row.seq, { row, line, tokens });
    this.used += tokens;
  }

  result(): Retrieved {
    const picked = [...this.chosen.values()].sort((a, b) => a.row.seq - b.row.seq);
    if (!picked.length) return NOTHING_RETRIEVED;
    const messages = picked.map((p) => ({ seq: p.row.seq, role: p.row.role, tokens: p.tokens, content: lineContent(headOf(p.row), p.line) }));
    return { text: picked.map((p) => p.line).join('\n'), tokens: this.used, messages };
  }
}

/** A neighbour's share of its hit's score, by its offset from the hit. */
const NEIGHBOUR_SHARE: ReadonlyArray<[offset: number, share: number]> = [
  [0, 1],
  [1, 0.95],
  [-1, 0.9],
  [2, 0.6],
  [-2, 0.5],
];

/**
 * The hits and the messages around them in the order recall takes them: a hit, then the message
 * after it (where an answer to what it says is), then the one before, then those two further out,
 * each at a share of its hit's score, so the close context of a strong hit comes before a weak
 * hit, and a weak hit still fills room that is left. Each seq once, at its highest priority; hits
 * next to each other read as one run.
 */
export function byPriority(hits: readonly RankedSeq[]): number[] {
  const out: Array<{ seq: number; priority: number; rank: number }> = [];
  hits.forEach((h, rank) => {
    for (const [offset, share] of NEIGHBOUR_SHARE) out.push({ seq: h.seq + offset, priority: h.score * share, rank });
  });
  out.sort((a, b) => b.priority - a.priority || a.rank - b.rank);
  return [...new Set(out.map((o) => o.seq))];
}

/** Rows read beyond what the budget would hold at the entity's mean length (some are missing, taken or longer). */
const READ_SLACK = 8;
/** The least of a cut message worth sending. */
const MIN_TRUNCATED = 12;
/** A line's number, role and date take about this many tokens more than its message. */
const LINE_HEAD_TOKENS = 16;

/**
 * A head's tokens depend only on its role and the number of digits of its seq: o200k splits
 * digits into runs of at most three, each one token, so the date's count never changes. Counted
 * once for each such shape, so thirty unique heads a turn neither cost a count nor push other
 * texts out of the estimator's cache.
 */
const headCounts = new Map<string, number>();
function headTokens(tok: TokenEstimator, row: MessageRow, head: string): number {
  const key = `${row.role} ${String(row.seq).length} ${row.createdAt.length}`;
  let n = headCounts.get(key);
  if (n === undefined) headCounts.set(key, (n = tok.count(head)));
  return n;
}

/** A recalled message's line as the model reads it starts with its number, who said it, and when it was written (to the minute). */
function headOf(m: MessageRow): string {
  return `#${m.seq} ${m.role} (${m.createdAt.slice(0, 16).replace('T', ' ')}): `;
}

/** The message's text as `line` carries it; a line cut inside its head carries none. */
function lineContent(head: string, line: string): string {
  return line.startsWith(head) ? line.slice(head.length) : '';
}
