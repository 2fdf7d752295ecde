/**
 * Recently used values (entity windows, universe conversations) kept in memory by a long-lived
 * process (server, REPL, batch) so a turn does not re-read hundreds of rows. An entry is valid
 * only while the version it was stored with matches one computed from the row read now: any
 * write, by this or another process, changes it, so a stale value is never used. LRU-bounded.
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, { version: string; value: T; storedAt: number }>();
  constructor(
    private readonly capacity = 64,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, version: string): { value: T; storedAt: number } | undefined {
    const hit = this.entries.get(key);
    if (!hit || hit.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  set(key: string, version: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, { version, value, storedAt: this.now() });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** The version of an entity's window: the counters every turn rewrites. */
export function windowVersion(e: { transcriptMessages: number; windowBlocks: number; windowTokens: number; updatedAt: string }): string {
  return `${e.transcriptMessages}:${e.windowBlocks}:${e.windowTokens}:${e.updatedAt}`;
}
