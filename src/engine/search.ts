import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, type SearchHit, type SearchInput, type SearchList, type SearchMode, type SearchSource } from '../core/wire/entity-types.js';
import { contentWords } from '../core/text/recall-query.js';
import { BadRequestError, NotFoundError } from '../core/errors.js';
import { SEARCH_QUERY_MAX_CHARS, type Snippet, type SearchTerms, parseSearch, snippetMaker } from '../core/text/search-query.js';
import type { LogHit, MessageHit, UniverseMessageHit } from '../store/types.js';
import type { EngineDeps } from './deps.js';

/** What a search reads: the store. */
type SearchDeps = Pick<EngineDeps, 'store'>;

const SOURCES: readonly SearchSource[] = ['entities', 'universes', 'logs'];
const MODES: readonly SearchMode[] = ['exact', 'any'];

/** The checks every source shares, done once. */
interface Checked {
  terms: SearchTerms;
  /** Mode `any`: the words any of which a hit shares a stem with (recall's store query); exact matching otherwise. */
  anyOf?: string[];
  /** The query's snippet cutter, compiled once for all its hits. */
  snippet: (text: string) => Snippet;
  since?: string;
  limit: number;
}

/**
 * Searches the account's entity transcripts (every message ever written, in the window or folded
 * away), its universe conversations, or its generation logs: most relevant first, newest first
 * among equals. Checked here, so every backend refuses the same input.
 */
export async function search(deps: SearchDeps, input: SearchInput, accountId: string): Promise<SearchList> {
  const source = checkSource(input.source);
  const q = checkQuery(input.q);
  const anyOf = checkMode(input.mode, source) === 'any' ? anyWords(q) : undefined;
  // Mode any marks each of its words where it appears as written (a hit by another form of its stem is not marked).
  const terms: SearchTerms = anyOf ? { clauses: anyOf.map((word) => ({ kind: 'word', word })) } : exactTerms(q);
  const c: Checked = { terms, anyOf, snippet: snippetMaker(terms), since: checkSince(input.since), limit: checkLimit(input.limit) };
  if (source !== 'entities' && input.entity_ids !== undefined) throw new BadRequestError(`entity_ids does not apply to ${source}`);
  if (source !== 'universes' && input.universe_ids !== undefined) throw new BadRequestError(`universe_ids applies to source universes only`);
  const data = source === 'entities' ? await entityHits(deps, input, accountId, c) : source === 'universes' ? await universeHits(deps, input, accountId, c) : await logHits(deps, input, accountId, c);
  return { object: 'list', data };
}

async function entityHits(deps: SearchDeps, input: SearchInput, accountId: string, c: Checked): Promise<SearchHit[]> {
  const role = checkRole(input.role, ['user', 'assistant']);
  const entityIds = await checkIds(input.entity_ids, 'entity_ids', async (id) => Boolean(await deps.store.entities.get(accountId, id)), 'entity', 'mgpt entities list');
  const q = { accountId, entityIds, role: role as MessageHit['role'] | undefined, since: c.since, limit: c.limit };
  const hits = c.anyOf ? await deps.store.entities.searchAny({ ...q, words: c.anyOf }) : await deps.store.entities.search({ ...q, terms: c.terms });
  return hits.map((h) => ({ object: 'search.hit', entity_id: h.entityId, entity_name: h.entityName, seq: h.seq, role: h.role, created_at: h.createdAt, ...c.snippet(h.content) }));
}

async function universeHits(deps: SearchDeps, input: SearchInput, accountId: string, c: Checked): Promise<SearchHit[]> {
  const role = checkRole(input.role, ['user', 'assistant', 'tool']);
  const userId = await userOf(deps, accountId);
  const owned = async (id: string) => (await deps.store.universes.get(id))?.userId === userId;
  const universeIds = await checkIds(input.universe_ids, 'universe_ids', owned, 'universe', 'mgpt universes list');
  const hits = await deps.store.universes.search({ userId, terms: c.terms, universeIds, role: role as UniverseMessageHit['role'] | undefined, since: c.since, limit: c.limit });
  return hits.map((h) => ({ object: 'search.hit', universe_id: h.universeId, universe_name: h.universeName, seq: h.seq, role: h.role, created_at: h.createdAt, ...c.snippet(h.content) }));
}

async function logHits(deps: SearchDeps, input: SearchInput, accountId: string, c: Checked): Promise<SearchHit[]> {
  if (input.role !== undefined) throw new BadRequestError('role does not apply to logs: a record holds both what was asked and what was answered');
  const hits: LogHit[] = await deps.store.logs.search({ ownerUserId: await userOf(deps, accountId), terms: c.terms, since: c.since, limit: c.limit });
  return hits.map((h) => ({ object: 'search.hit', log_id: h.id, universe_id: h.universeId, created_at: h.createdAt, ...c.snippet(h.text.trim()) }));
}

/** The user that owns the account's universes and logs. */
async function userOf(deps: SearchDeps, accountId: string): Promise<string> {
  const account = await deps.store.accounts.get(accountId);
  if (!account) throw new NotFoundError(`no account ${accountId}`);
  return account.userId;
}

function checkSource(source: unknown): SearchSource {
  if (source === undefined) return 'entities';
  if (typeof source === 'string' && (SOURCES as readonly string[]).includes(source)) return source as SearchSource;
  throw new BadRequestError(`source must be one of ${SOURCES.join(', ')}, got ${JSON.stringify(source)}`);
}

/** Mode `any` is recall's ranked query, over entity transcripts only. */
function checkMode(mode: unknown, source: SearchSource): SearchMode {
  if (mode === undefined) return 'exact';
  if (typeof mode !== 'string' || !(MODES as readonly string[]).includes(mode)) throw new BadRequestError(`mode must be exact or any, got ${JSON.stringify(mode)}`);
  if (mode === 'any' && source !== 'entities') {
    throw new BadRequestError(`mode any searches entity transcripts only, not ${source}`, { hint: 'search universes and logs for exact words (without --any)' });
  }
  return mode as SearchMode;
}

/** Words, phrases and prefixes, all of which must match. */
function exactTerms(q: string): SearchTerms {
  const terms = parseSearch(q);
  if (terms.clauses.length === 0) throw new BadRequestError('the query has no words to search for', { hint: 'search for words, "a phrase" or a prefix*' });
  return terms;
}

/** Mode `any`: the query's content words, as recall takes them (no stop words, at most 16). */
function anyWords(q: string): string[] {
  const words = contentWords(q);
  if (words.length === 0) {
    throw new BadRequestError('the query has only common words, which mode any never matches alone', { hint: 'add a rarer word, or search for the exact words (without --any)' });
  }
  return words;
}

function checkQuery(q: unknown): string {
  if (typeof q !== 'string' || q.trim() === '') throw new BadRequestError('q is required: the words to search for', { hint: 'mgpt search "the secret word"' });
  if (q.length > SEARCH_QUERY_MAX_CHARS) throw new BadRequestError(`q is ${q.length} characters; the limit is ${SEARCH_QUERY_MAX_CHARS}`);
  return q;
}

function checkRole(role: unknown, allowed: readonly string[]): string | undefined {
  if (role === undefined || (typeof role === 'string' && allowed.includes(role))) return role as string | undefined;
  throw new BadRequestError(`role must be ${allowed.join(' or ')}, got ${JSON.stringify(role)}`);
}

/** An ISO 8601 time, as the stored times are written (UTC, so they compare as text). */
function checkSince(since: unknown): string | undefined {
  if (since === undefined) return undefined;
  const t = typeof since === 'string' ? Date.parse(since) : NaN;
  if (Number.isNaN(t)) throw new BadRequestError(`since must be an ISO 8601 time, got ${JSON.stringify(since)}`, { hint: 'for example 2026-11-01 or 2026-11-01T09:00:00Z' });
  return new Date(t).toISOString();
}

function checkLimit(limit: unknown): number {
  if (limit === undefined) return SEARCH_LIMIT_DEFAULT;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX) {
    throw new BadRequestError(`limit must be an integer from 1 to ${SEARCH_LIMIT_MAX}, got ${JSON.stringify(limit)}`);
  }
  return limit;
}

/** Ids to search within: each one the caller's (a 404 names the first that is not). */
async function checkIds(ids: unknown, field: string, mine: (id: string) => Promise<boolean>, kind: string, list: string): Promise<string[] | undefined> {
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')) {
    throw new BadRequestError(`${field} must be a non-empty list of ${kind} ids`);
  }
  for (const id of ids as string[]) {
    if (!(await mine(id))) throw new NotFoundError(`no ${kind} ${id} on this account`, { hint: `list them with: ${list}` });
  }
  return ids as string[];
}
