/** How often a streamed reply reaches the screen at most, in ms. */
export const STREAM_FLUSH_MS = 50;

/**
 * A streamed reply's text on its way to the screen: the first delta shows at once, later ones at
 * most every `ms`, the latest text winning. A render for every delta (hundreds a second from a fast
 * model) kept a busy machine from reading keys, Ctrl-C included.
 */
export class StreamThrottle {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pending: string | null = null;

  constructor(
    private readonly show: (text: string) => void,
    private readonly ms = STREAM_FLUSH_MS,
  ) {}

  /** The whole text so far. */
  update(text: string): void {
    this.pending = text;
    if (!this.timer) this.tick();
  }

  /** Shows what is pending now: a reply that fails keeps what came of it (line mode prints it). */
  flush(): void {
    if (this.pending !== null) this.show(this.pending);
    this.pending = null;
  }

  /** Ends the stream: what is pending is dropped, as the caller shows the final text itself. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
  }

  private tick = (): void => {
    this.timer = null;
    if (this.pending === null) return;
    const text = this.pending;
    this.pending = null;
    this.show(text);
    this.timer = setTimeout(this.tick, this.ms);
  };
}
