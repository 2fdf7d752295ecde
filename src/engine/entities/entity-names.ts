import { ENTITY_NAME_MAX, nameTaken as nameTakenError } from '../../core/wire/entity-types.js';
import type { Store } from '../../store/types.js';

/**
 * Whether another entity of the account has this name. A create refuses one from every client
 * (CLI, console, HTTP), so a name names one entity; an import numbers it where its caller asks.
 */
export async function nameTaken(store: Store, accountId: string, name: string): Promise<boolean> {
  if (!name) return false;
  const rows = await store.entities.matching(accountId, name, null, 1);
  return rows.some((r) => r.name === name);
}

/** Refuses a name another entity has, saying how to go on. */
export async function refuseTakenName(store: Store, accountId: string, name: string): Promise<void> {
  if (!(await nameTaken(store, accountId, name))) return;
  throw nameTakenError(name);
}

/** `name` when free, else the first free `name (2)`, `name (3)`… (cut to fit the name limit). */
export async function freeName(store: Store, accountId: string, name: string): Promise<string> {
  if (!(await nameTaken(store, accountId, name))) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = [...name].slice(0, ENTITY_NAME_MAX - suffix.length).join('') + suffix;
    if (!(await nameTaken(store, accountId, candidate))) return candidate;
  }
}
