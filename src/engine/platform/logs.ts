import { BadRequestError, NotFoundError } from '../../core/errors.js';
import { LOCAL_USER_ID, LOG_PAGE_SIZE_MAX, type LogDetail, type LogList, type LogQuery, type LogRecord } from '../../core/wire/universe-types.js';
import type { LogRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { MIN_ID_PREFIX, pickByRef } from '../../core/ref.js';
import { UUID } from '../../core/ids.js';

/** What a generation reports to its log; the record's id, owner and time are added here. */
export interface LogEntry extends Omit<LogRecord, 'id' | 'ownerUserId' | 'createdAt'> {
  /** Summaries only: never prompt text. */
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}

/** One generation record as stored; the acting user owns it. */
export function logRow(deps: Pick<EngineDeps, 'newId' | 'clock'>, e: LogEntry): LogRow {
  const { request, response, ...rest } = e;
  return {
    id: deps.newId(),
    ownerUserId: e.userId,
    ...rest,
    createdAt: deps.clock.iso(),
    requestSummary: JSON.stringify(request),
    responseSummary: JSON.stringify(response),
  };
}

/** Writes one generation record; returns its id. */
export async function writeLog(deps: Pick<EngineDeps, 'newId' | 'clock' | 'store'>, e: LogEntry): Promise<string> {
  const row = logRow(deps, e);
  await deps.store.logs.insert(row);
  return row.id;
}

/** GET /logs: a page of records, newest first, or one record in detail. */
export class LogService {
  constructor(private readonly deps: EngineDeps) {}

  async list(q: LogQuery = {}, ownerUserId = LOCAL_USER_ID): Promise<LogList> {
    const page = q.page ?? 1;
    const pageSize = q.pageSize ?? 20;
    const errors = [];
    if (!Number.isSafeInteger(page) || page < 1) errors.push({ field: 'page', message: 'must be an integer >= 1' });
    if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > LOG_PAGE_SIZE_MAX) {
      errors.push({ field: 'pageSize', message: `must be an integer from 1 to ${LOG_PAGE_SIZE_MAX}` });
    }
    if (q.kind !== undefined && q.kind !== 'text' && q.kind !== 'image') errors.push({ field: 'kind', message: 'text or image' });
    if (errors.length) throw new BadRequestError(errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
    const { rows, total } = await this.deps.store.logs.list(
      { ownerUserId, kind: q.kind, gameId: q.game, userId: q.user, requestId: q.requestId },
      pageSize,
      (page - 1) * pageSize,
    );
    return { data: rows.map(toRecord), page, pageSize, total, hasMore: page * pageSize < total };
  }

  /** A log id, or a unique prefix of one of 4+ characters. */
  async resolve(ref: string, ownerUserId = LOCAL_USER_ID): Promise<string> {
    if (UUID.test(ref) || ref.length < MIN_ID_PREFIX) return ref;
    const ids = await this.deps.store.logs.idsWithPrefix(ownerUserId, ref.toLowerCase(), 11);
    return pickByRef('log', ref, ids.map((id) => ({ id })), 'list logs with: mgpt logs').id;
  }

  async get(id: string, ownerUserId = LOCAL_USER_ID): Promise<LogDetail> {
    const row = typeof id === 'string' ? await this.deps.store.logs.get(ownerUserId, id) : undefined;
    if (!row) throw new NotFoundError(`no log ${id}`, { hint: 'list logs with: mgpt logs' });
    return { ...toRecord(row), request: JSON.parse(row.requestSummary), response: JSON.parse(row.responseSummary) };
  }
}

function toRecord({ requestSummary, responseSummary, ...record }: LogRow): LogRecord {
  const facade = summaryField(requestSummary, 'facade', 'string');
  const entityId = summaryField(requestSummary, 'entityId', 'string');
  const route = summaryField(requestSummary, 'route', 'string');
  const cached = summaryField(responseSummary, 'cachedInputTokens', 'number');
  return {
    ...record, ...(facade === undefined ? {} : { facade }), ...(entityId === undefined ? {} : { entityId }), ...(route === undefined ? {} : { route }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
  };
}

/** What the provider's prompt cache served, for a response summary (only when the provider said). */
export function cachedOf(cachedTokens: number | undefined): { cachedInputTokens?: number } {
  return cachedTokens === undefined ? {} : { cachedInputTokens: cachedTokens };
}

/**
 * A field kept in a record's JSON summary: what the OpenAI facade made of a request (stateless,
 * side, regenerated) in its request summary, what the provider's cache served in its response's.
 */
function summaryField<T extends 'string' | 'number'>(summary: string, field: string, type: T): (T extends 'string' ? string : number) | undefined {
  try {
    const value = (JSON.parse(summary) as Record<string, unknown>)[field];
    return typeof value === type ? (value as T extends 'string' ? string : number) : undefined;
  } catch {
    return undefined;
  }
}
