/**
 * A progress bar on stderr for long work: done, failed, rate and ETA, redrawn in place at most
 * ten times a second. Without a terminal it stays silent (the summary line says it all).
 */
export class Progress {
  done = 0;
  failed = 0;
  private readonly started = performance.now();
  private lastDraw = 0;

  constructor(
    private readonly out: { write(s: string): boolean },
    private readonly total: number,
    private readonly tty: boolean,
  ) {}

  tick(ok: boolean): void {
    this.done++;
    if (!ok) this.failed++;
    const now = performance.now();
    if (this.tty && (now - this.lastDraw > 100 || this.done === this.total)) {
      this.lastDraw = now;
      this.out.write(`\r${this.line()}\x1b[K`);
    }
  }

  elapsedMs(): number {
    return performance.now() - this.started;
  }

  /** `[██████░░░░░░░░░░░░░░] 61/200  2 failed  14.3/s  ETA 10s` */
  line(): string {
    const width = 20;
    const filled = Math.round((this.done / Math.max(1, this.total)) * width);
    const secs = this.elapsedMs() / 1000;
    const rate = this.done / Math.max(secs, 1e-3);
    const eta = rate > 0 ? Math.ceil((this.total - this.done) / rate) : 0;
    return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${this.done}/${this.total}  ${this.failed} failed  ${rate.toFixed(1)}/s  ETA ${eta}s`;
  }

  finish(): void {
    if (this.tty && this.done > 0) this.out.write('\n');
  }
}
