import type { ChatModel, ServerContext } from '../../providers/spec.js';
import type { Clock } from '../support/clock.js';

/** How long after a server did not say its layout it is asked again (it was down, or slow under load). */
const ASK_AGAIN_MS = 60_000;

/**
 * What the servers behind shared routes say of their layout (llama-server's `/props`: the context
 * and how many slots share it), asked once per process and route. The share a turn is planned for
 * comes from it, and must not move from turn to turn: a window planned for another size rotates at
 * another point, and the entity's prompt cache goes cold.
 */
export class ServerLayouts {
  private readonly known = new Map<string, ServerContext>();
  private readonly asking = new Map<string, Promise<ServerContext | undefined>>();
  private readonly askAfter = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /**
   * The layout the route's server reported, asked now if it never was; `first` hears the answer
   * once, before any caller does. Undefined while the server does not say.
   */
  async of(model: ChatModel, first: (layout: ServerContext) => Promise<void>): Promise<ServerContext | undefined> {
    const key = model.routeKey;
    const known = this.known.get(key);
    if (known || !model.serverContext || this.clock.now() < (this.askAfter.get(key) ?? 0)) return known;
    let asking = this.asking.get(key);
    if (!asking) {
      asking = this.ask(model, first).finally(() => this.asking.delete(key));
      this.asking.set(key, asking);
    }
    return asking;
  }

  /** Forgets what one route's server said, or every one's (their calibration was reset). */
  forget(routeKey?: string): void {
    for (const map of [this.known, this.askAfter]) {
      if (routeKey === undefined) map.clear();
      else map.delete(routeKey);
    }
  }

  private async ask(model: ChatModel, first: (layout: ServerContext) => Promise<void>): Promise<ServerContext | undefined> {
    let layout: ServerContext | undefined;
    try {
      layout = await model.serverContext!();
    } catch {
      // Asked again after the pause, like a server that did not say.
    }
    if (!layout) {
      this.askAfter.set(model.routeKey, this.clock.now() + ASK_AGAIN_MS);
      return undefined;
    }
    await first(layout);
    this.known.set(model.routeKey, layout);
    return layout;
  }
}

/**
 * The slots a turn's share is cut for: the route's configured `sharedSlots`, else what the server
 * reported, else 1 (the whole context, as before the server said).
 */
export function shareSlots(configured: number | undefined, reported: ServerContext | undefined): number {
  return configured ?? reported?.slots ?? 1;
}
