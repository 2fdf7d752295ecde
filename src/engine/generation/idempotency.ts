import { IDEMPOTENCY_KEY_MAX } from '../../core/wire/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import type { IdempotencyRow, RequestRow, Store } from '../../store/types.js';

/**
 * Where an idempotency key is unique, and what it stands for: an entity's messages (an entity
 * turn's key), an account's requests (a stateless completion's Idempotency-Key), a user's
 * universe requests (a requestId, whose record also says a turn is pending or failed).
 */
export type IdempotencyScope =
  | { kind: 'entity'; entityId: string }
  | { kind: 'account'; accountId: string }
  | { kind: 'universe-user'; userId: string };

/** A key's stored record in its scope, whatever its shape. */
type Stored<S extends IdempotencyScope> = S extends { kind: 'universe-user' } ? RequestRow : IdempotencyRow;

/** The one way a key is looked up: its scope and the key; a malformed key is refused before any read. */
export function storedFor<S extends IdempotencyScope>(store: Store, scope: S, key: string): Promise<Stored<S> | undefined> {
  if (scope.kind !== 'universe-user') checkKey(key);
  switch (scope.kind) {
    case 'entity':
      return store.idempotency.get(scope.entityId, key) as Promise<Stored<S> | undefined>;
    case 'account':
      return store.idempotency.completion(scope.accountId, key) as Promise<Stored<S> | undefined>;
    default:
      return store.universes.request((scope as { userId: string }).userId, key) as Promise<Stored<S> | undefined>;
  }
}

/**
 * The stored answer for a key used before, if it was: the same content gets it again, other
 * content under the same key is refused (a key names one message or request, forever).
 */
export async function storedAnswer<T>(store: Store, scope: Exclude<IdempotencyScope, { kind: 'universe-user' }>, key: string | undefined, contentSha256: string): Promise<T | undefined> {
  if (key === undefined) return undefined;
  const row = await storedFor(store, scope, key);
  if (!row) return undefined;
  if (row.contentSha256 !== contentSha256) throw keyReused(scope, key);
  return JSON.parse(row.completion) as T;
}

/** A key already used with other content (an entity's message) or another request (a completion). */
export function keyReused(scope: IdempotencyScope, key: string): BadRequestError {
  const other = scope.kind === 'entity' ? ['different content', 'message'] : ['a different request', 'request'];
  return new BadRequestError(`idempotency key ${JSON.stringify(key)} was already used with ${other[0]}`, {
    hint: `use a new key for a new ${other[1]}`,
  });
}

/** A key is a non-empty string of at most IDEMPOTENCY_KEY_MAX characters. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new BadRequestError('idempotency key must be a non-empty string');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw new BadRequestError(`idempotency key is ${key.length} characters; the limit is ${IDEMPOTENCY_KEY_MAX}`);
}
