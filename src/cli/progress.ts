/**
 * A progress bar on stderr for long work: done, failed, elapsed, rate and ETA, drawn as soon as
 * the work starts (0/N) and redrawn in place at most ten times a second, and once a second while
 * nothing finishes (the elapsed time moves). Without a terminal it stays silent (the summary line
 * says it all).
 */
export class Progress {
  done = 0;
  failed = 0;
  private readonly started = performance.now();
  private lastDraw = 0;
  private readonly timer?: ReturnType<typeof setInterval>;

  constructor(
    private readonly out: { write(s: string): boolean },
    private readonly total: number,
    private readonly tty: boolean,
  ) {
    if (!tty) return;
    this.draw();
    this.timer = setInterval(() => this.draw(), 1000);
    this.timer.unref();
  }

  tick(ok: boolean): void {
    this.done++;
    if (!ok) this.failed++;
    if (this.tty && (performance.now() - this.lastDraw > 100 || this.done === this.total)) this.draw();
  }

  elapsedMs(): number {
    return performance.now() - this.started;
  }

  /** `[██████░░░░░░░░░░░░░░] 61/200  2 failed  4s  14.3/s  ETA 10s` */
  line(): string {
    const width = 20;
    const filled = Math.round((this.done / Math.max(1, this.total)) * width);
    const secs = this.elapsedMs() / 1000;
    const rate = this.done / Math.max(secs, 1e-3);
    const eta = rate > 0 ? `ETA ${Math.ceil((this.total - this.done) / rate)}s` : 'ETA -';
    return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${this.done}/${this.total}  ${this.failed} failed  ${Math.floor(secs)}s  ${rate.toFixed(1)}/s  ${eta}`;
  }

  finish(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.tty) this.out.write('\n');
  }

  private draw(): void {
    this.lastDraw = performance.now();
    this.out.write(`\r${this.line()}\x1b[K`);
  }
}
