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
  return new FreeNames(store, accountId).take(name);
}

/** `name (n)`, the name cut so the whole fits the name limit. */
export function numberedName(name: string, n: number): string {
  const suffix = ` (${n})`;
  return [...name].slice(0, ENTITY_NAME_MAX - suffix.length).join('') + suffix;
}

/** The widest number suffix counted on: ` (` and ten digits and `)`. */
const SUFFIX_ROOM = 13;

/**
 * Free names for many new entities at once (an import's): each name's taken numbers are read
 * once, with one query, and numbering goes on from the last one given, so naming n entities
 * alike costs O(n) in all, not a query per number tried for each of them.
 */
export class FreeNames {
  private readonly bases = new Map<string, { taken: Set<string>; next: number }>();
  /** Every name given out here: later reads of other names do not see a dry run's, or another base's numbered one. */
  private readonly given = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly accountId: string,
  ) {}

  /** `name` when free, else the first free `name (2)`, `name (3)`… after those given before. */
  async take(name: string): Promise<string> {
    const base = await this.base(name);
    const free = (c: string) => !base.taken.has(c) && !this.given.has(c);
    let picked = name;
    if (!free(name)) {
      let n = base.next;
      while (!free(numberedName(name, n))) n++;
      picked = numberedName(name, n);
      base.next = n + 1;
    }
    this.given.add(picked);
    return picked;
  }

  private async base(name: string): Promise<{ taken: Set<string>; next: number }> {
    let b = this.bases.get(name);
    if (!b) {
      b = { taken: new Set(await this.store.entities.namesLike(this.accountId, name, numberStem(name))), next: 2 };
      this.bases.set(name, b);
    }
    return b;
  }
}

/** What every numbered form of `name` starts with: `name (`, or, for a name the suffix cuts, its uncut part. */
function numberStem(name: string): string {
  const chars = [...name];
  return chars.length + SUFFIX_ROOM <= ENTITY_NAME_MAX ? `${name} (` : chars.slice(0, ENTITY_NAME_MAX - SUFFIX_ROOM).join('');
}
