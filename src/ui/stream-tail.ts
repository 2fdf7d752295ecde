import wrapAnsi from 'wrap-ansi';

/**
 * The end of a streaming reply that fits in a number of terminal rows, wrapped as ink wraps text.
 * ink redraws its whole screen, every finished message included, on each frame once the live part
 * is as tall as the terminal; keeping the live part shorter keeps finished messages printed once.
 * The whole reply is printed when it ends.
 *
 * Wrapping is slow (about 10 µs a character), so a line is wrapped once: finished lines are kept,
 * and the line still growing is wrapped from the start of its last row, since appending text
 * changes no earlier row. One instance serves one reply at one width.
 */
export class StreamTail {
  private readonly wrapped = new Map<string, string[]>();
  private growing = { line: '', rows: [''], lastStart: 0 };

  constructor(readonly columns: number) {}

  /** The last `rows` rows of `text`, joined; `text` itself when it fits. */
  tail(text: string, rows: number): string {
    const lines = text.split('\n');
    const out: string[][] = [];
    let count = 0;
    for (let i = lines.length - 1; i >= 0 && count < rows; i--) {
      const wrapped = i === lines.length - 1 ? this.grow(lines[i]) : this.finished(lines[i]);
      out.push(wrapped);
      count += wrapped.length;
    }
    if (count <= rows && out.length === lines.length) return text;
    return out.reverse().flat().slice(-rows).join('\n');
  }

  private wrap(text: string): string[] {
    return text ? wrapAnsi(text, this.columns, { trim: false, hard: true }).split('\n') : [''];
  }

  private finished(line: string): string[] {
    let rows = this.wrapped.get(line);
    if (!rows) {
      rows = this.growing.line === line ? this.growing.rows : this.wrap(line);
      this.wrapped.set(line, rows);
    }
    return rows;
  }

  /** The last line, usually the one before it with more text at its end. */
  private grow(line: string): string[] {
    const g = this.growing;
    if (line === g.line) return g.rows;
    // The rows of the text are the text itself, cut: what a row starts with is where it starts.
    const [done, from] = line.startsWith(g.line) ? [g.rows.slice(0, -1), g.lastStart] : [[], 0];
    const more = this.wrap(line.slice(from));
    const rows = [...done, ...more];
    this.growing = { line, rows, lastStart: line.length - more.at(-1)!.length };
    return rows;
  }
}
