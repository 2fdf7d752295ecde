import type { Backend } from '../core/backend.js';
import { fingerprint, parseUri } from './resources.js';
import type { Change } from './tool.js';

/** How often subscribed resources are read again for changes other processes made. */
export const WATCH_MS = 2000;

/**
 * Subscriptions (resources/subscribe) of one client: a change this server makes is told at once;
 * one another process makes (a turn in `mgpt chat`, another replica) is found by reading the
 * subscribed resources again every WATCH_MS.
 */
export class Watcher {
  private readonly seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly backend: Backend,
    private readonly updated: (uri: string) => Promise<void>,
    private readonly listChanged: () => Promise<void>,
  ) {}

  async subscribe(uri: string): Promise<void> {
    parseUri(uri);
    this.seen.set(uri, await fingerprint(this.backend, uri));
    this.timer ??= setInterval(() => void this.poll(), WATCH_MS).unref();
  }

  unsubscribe(uri: string): void {
    this.seen.delete(uri);
    if (this.seen.size === 0) this.stop();
  }

  /** What this server changed: subscribers of it are told now; a block made or removed changes the list. */
  changed(c: Change): void {
    for (const uri of this.seen.keys()) {
      const ref = parseUri(uri);
      const hit = ref.id === c.entityId && (ref.label === undefined ? c.window === true : c.label === '' || c.label === ref.label);
      if (hit) void this.recheck(uri, true);
    }
    if (c.label !== undefined) void this.listChanged().catch(() => undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const uri of [...this.seen.keys()]) await this.recheck(uri, false);
    } finally {
      this.polling = false;
    }
  }

  private async recheck(uri: string, force: boolean): Promise<void> {
    const now = await fingerprint(this.backend, uri);
    if (!this.seen.has(uri)) return;
    const before = this.seen.get(uri);
    this.seen.set(uri, now);
    if (force || now !== before) await this.updated(uri).catch(() => undefined);
  }
}
