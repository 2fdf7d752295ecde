/** How many recent replies a route's reservation is taken from. */
const KEPT = 64;
/** Until this many replies were seen, a reply reserves its whole bound. */
export const REPLIES_BEFORE_TRUSTED = 16;
/** The share of recent replies a reservation covers: the rest outgrow it (and the server's overflow handling takes them). */
const PERCENTILE = 0.95;

/**
 * The lengths of recent replies on one route (for one purpose), in the model's tokens. A request
 * on a shared context reserves a high percentile of them rather than its reply's full bound: most
 * replies end well before it (a story ends), and every token reserved and never used keeps another
 * request waiting that the server could have run.
 */
export class ReplySizes {
  private readonly seen: number[] = [];
  private next = 0;

  /** A reply that ended, `tokens` long; one cut because the shared context ran out counts as its whole bound. */
  add(tokens: number): void {
    if (this.seen.length < KEPT) this.seen.push(tokens);
    else this.seen[this.next] = tokens;
    this.next = (this.next + 1) % KEPT;
  }

  /** The room to reserve for a reply that may run to `bound` tokens. */
  reserve(bound: number): number {
    if (this.seen.length < REPLIES_BEFORE_TRUSTED) return bound;
    const sorted = [...this.seen].sort((a, b) => a - b);
    const high = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * PERCENTILE) - 1)]!;
    return Math.min(bound, Math.max(1, high));
  }
}
