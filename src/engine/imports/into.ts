import { NotFoundError } from '../../core/errors.js';
import { MIN_ID_PREFIX, pickByRef } from '../../core/ref.js';
import { UUID } from '../../core/ids.js';
import type { EntityRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';

/** The --into entity by id, id prefix or name; undefined when there is none (the import then makes it). */
export async function resolveInto(deps: EngineDeps, ref: string, accountId: string): Promise<EntityRow | undefined> {
  if (UUID.test(ref)) return deps.store.entities.get(accountId, ref);
  const prefix = ref.length >= MIN_ID_PREFIX ? ref.toLowerCase() : null;
  const rows = await deps.store.entities.matching(accountId, ref, prefix, 11);
  if (rows.length === 0) return undefined;
  try {
    return pickByRef('entity', ref, rows, 'list entities with: mgpt entities list');
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}
