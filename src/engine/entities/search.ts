import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, type SearchHit, type SearchInput, type SearchList } from '../../core/entity-types.js';
import { BadRequestError, NotFoundError } from '../../core/errors.js';
import { parseSearch, snippetOf } from '../../core/search-query.js';
import type { MessageHit } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';

const QUERY_MAX_CHARS = 1000;

/**
 * Searches the account's transcripts (every message ever written, in the window or folded away):
 * most relevant first, newest first among equals. Checked here, so every backend refuses the same input.
 */
export async function searchTranscripts(deps: EngineDeps, input: SearchInput, accountId: string): Promise<SearchList> {
  const q = checkQuery(input.q);
  const terms = parseSearch(q);
  if (terms.clauses.length === 0) {
    throw new BadRequestError('the query has no words to search for', { hint: 'search for words, "a phrase" or a prefix*' });
  }
  const entityIds = await checkEntities(deps, input.entity_ids, accountId);
  const hits = await deps.store.entities.search({
    accountId, terms, entityIds, role: checkRole(input.role), since: checkSince(input.since), limit: checkLimit(input.limit),
  });
  return { object: 'list', data: hits.map((h) => toHit(h, terms)) };
}

function toHit(h: MessageHit, terms: ReturnType<typeof parseSearch>): SearchHit {
  return { object: 'search.hit', entity_id: h.entityId, entity_name: h.entityName, seq: h.seq, role: h.role, created_at: h.createdAt, ...snippetOf(h.content, terms) };
}

function checkQuery(q: unknown): string {
  if (typeof q !== 'string' || q.trim() === '') throw new BadRequestError('q is required: the words to search for', { hint: 'mgpt search "the secret word"' });
  if (q.length > QUERY_MAX_CHARS) throw new BadRequestError(`q is ${q.length} characters; the limit is ${QUERY_MAX_CHARS}`);
  return q;
}

function checkRole(role: unknown): 'user' | 'assistant' | undefined {
  if (role === undefined || role === 'user' || role === 'assistant') return role;
  throw new BadRequestError(`role must be user or assistant, got ${JSON.stringify(role)}`);
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

/** Entity ids to search within: each one the account's (a 404 names the first that is not). */
async function checkEntities(deps: EngineDeps, ids: unknown, accountId: string): Promise<string[] | undefined> {
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')) {
    throw new BadRequestError('entity_ids must be a non-empty list of entity ids');
  }
  for (const id of ids as string[]) {
    if (!(await deps.store.entities.get(accountId, id))) throw new NotFoundError(`no entity ${id} on this account`, { hint: 'list entities with: mgpt entities list' });
  }
  return ids as string[];
}
