import type { BlockRow, EntityRow } from '../store/entity-repo.js';

/**
 * Recently used entity windows, kept in memory by a long-lived process (server, REPL, batch) so a
 * turn does not re-read hundreds of blocks. An entry is valid only while the entity row's counters
 * match the ones it was stored with: any write by another process changes them, and the turn reads
 * the row under its lease, so a stale window is never used.
 */
export class WindowCache {
  private readonly entries = new Map<string, { version: string; blocks: readonly BlockRow[] }>();
  constructor(private readonly capacity = 64) {}

  static version(e: Pick<EntityRow, 'transcriptMessages' | 'windowBlocks' | 'windowTokens' | 'updatedAt'>): string {
    return `${e.transcriptMessages}:${e.windowBlocks}:${e.windowTokens}:${e.updatedAt}`;
  }

  get(entity: EntityRow): readonly BlockRow[] | undefined {
    const hit = this.entries.get(entity.id);
    if (!hit || hit.version !== WindowCache.version(entity)) return undefined;
    // Refresh its place in the LRU order.
    this.entries.delete(entity.id);
    this.entries.set(entity.id, hit);
    return hit.blocks;
  }

  set(entityId: string, version: string, blocks: readonly BlockRow[]): void {
    this.entries.delete(entityId);
    this.entries.set(entityId, { version, blocks });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(entityId: string): void {
    this.entries.delete(entityId);
  }
}
