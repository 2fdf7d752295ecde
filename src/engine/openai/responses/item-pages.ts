import { BadRequestError } from '../../../core/errors.js';
import type { ItemList } from '../../../core/wire/responses-types.js';

/** A list's paging, as OpenAI takes it: `after` an item id, `limit` 1..100 (20), `order` asc or desc (desc). */
export interface ListQuery {
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

/** The query string's paging fields, checked (`include` is accepted: every item is already whole). */
export function parseListQuery(q: Record<string, string | undefined>): ListQuery {
  const limit = q.limit === undefined ? 20 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new BadRequestError(`limit must be an integer from 1 to 100 (got ${JSON.stringify(q.limit)})`);
  const order = q.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new BadRequestError('order must be "asc" or "desc"');
  return { limit, order, ...(q.after ? { after: q.after } : {}) };
}

/** One page of items held in their natural order (oldest first). */
export function pageOf<T extends { id: string }>(items: readonly T[], q: ListQuery): ItemList<T> {
  const ordered = q.order === 'asc' ? items.slice() : items.slice().reverse();
  let from = 0;
  if (q.after !== undefined) {
    const at = ordered.findIndex((i) => i.id === q.after);
    if (at === -1) throw new BadRequestError(`after ${JSON.stringify(q.after)} names no item of this list`);
    from = at + 1;
  }
  const data = ordered.slice(from, from + q.limit);
  return listOf(data, from + q.limit < ordered.length);
}

export function listOf<T extends { id: string }>(data: T[], hasMore: boolean): ItemList<T> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: hasMore };
}
