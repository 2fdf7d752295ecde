import { sanitizeForTerminal } from '../core/text/terminal-text.js';
import { shortId } from '../core/ref.js';
import { windowLimit } from '../core/window-plan.js';
import { timeAgo } from '../ui/time-ago.js';
import type { CliContext, Io } from './context.js';
import { filteredJson } from './json-flags.js';

export { sanitizeForTerminal };

type Style = (text: string) => string;

/** The styles mgpt uses. */
export interface Paint {
  bold: Style;
  dim: Style;
  red: Style;
  green: Style;
  yellow: Style;
  cyan: Style;
}

const plain: Paint = { bold: String, dim: String, red: String, green: String, yellow: String, cyan: String };
let chalk: Paint | undefined;

/** Whether either output stream can show colour: off with NO_COLOR or when not a terminal. */
export function colorWanted(io: Io, env: CliContext['env']): boolean {
  return (io.stdoutIsTTY || io.stderrIsTTY) && !env.NO_COLOR;
}

/**
 * Loads chalk, only when a terminal will show colour: piped runs (scripts, CI) skip its load
 * time entirely. Called once before a command runs.
 */
export async function loadColors(): Promise<void> {
  const { Chalk } = await import('chalk');
  chalk = new Chalk({ level: 1 });
}

/** Colours for a stream: plain text with NO_COLOR or when the stream is not a terminal. */
export function colors(ctx: CliContext, stream: 'stdout' | 'stderr' = 'stdout'): Paint {
  const tty = stream === 'stdout' ? ctx.io.stdoutIsTTY : ctx.io.stderrIsTTY;
  return tty && chalk && !ctx.env.NO_COLOR ? chalk : plain;
}

/** Machine output: exactly one JSON document on stdout (or what `--json FIELDS` and `--jq` keep of it). */
export function printJson(io: Io, value: unknown): void {
  if (io.jsonFilter) return void io.stdout.write(filteredJson(value, io.jsonFilter, io.stdoutIsTTY));
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export interface Column<T> {
  header: string;
  value(row: T): string;
  /** A timestamp (ISO): "3 min ago" on a terminal, as stored when piped. */
  time?: boolean;
  /** Right-align (numbers). */
  right?: boolean;
  /** Truncate to this many characters on a terminal. */
  max?: number;
  /** An id: its first 8 characters on a terminal (they work as input), whole when piped. */
  id?: boolean;
  /** Never narrowed to fit the terminal (short lists such as scopes, where a cut hides meaning). */
  keep?: boolean;
}

/** A table on a terminal; tab-separated lines without a header when piped (gh's convention). */
export function printTable<T>(ctx: CliContext, columns: Column<T>[], rows: T[]): void {
  const { io } = ctx;
  if (!io.stdoutIsTTY) {
    for (const r of rows) io.stdout.write(columns.map((c) => oneLine(sanitizeForTerminal(c.value(r)))).join('\t') + '\n');
    return;
  }
  const c = colors(ctx);
  const now = Date.now();
  const text = (col: Column<T>, r: T) =>
    col.time ? relativeTime(col.value(r), now) : col.id ? shortId(col.value(r)) : oneLine(sanitizeForTerminal(col.value(r)));
  let cells = rows.map((r) => columns.map((col) => clip(text(col, r), col.max)));
  const widths = fitWidths(columns, cells, io.columns);
  cells = cells.map((row) => row.map((v, i) => clip(v, widths[i])));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (columns[i].right ? v.padStart(widths[i]) : i === vals.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  io.stdout.write(c.bold(line(columns.map((col) => col.header))) + '\n');
  for (const row of cells) io.stdout.write(line(row) + '\n');
}

/** Column widths, the widest text columns narrowed until the table fits `columns` (two spaces between). */
function fitWidths<T>(columns: Column<T>[], cells: string[][], total?: number): number[] {
  const widths = columns.map((col, i) => Math.max(col.header.length, ...cells.map((row) => row[i].length)));
  if (!total) return widths;
  let excess = widths.reduce((a, b) => a + b, 0) + 2 * (columns.length - 1) - total;
  // Numbers and times keep their width; the text column with the most to give gives way, down to its header or 8.
  const floor = (j: number) => Math.max(columns[j].header.length, 8);
  while (excess > 0) {
    let i = -1;
    for (let j = 0; j < columns.length; j++) {
      if (columns[j].right || columns[j].time || columns[j].id || columns[j].keep) continue;
      if (widths[j] - floor(j) > (i < 0 ? 0 : widths[i] - floor(i))) i = j;
    }
    if (i < 0) break;
    const cut = Math.min(excess, widths[i] - floor(i));
    widths[i] -= cut;
    excess -= cut;
  }
  return widths;
}

/** The one time format of every table and list: `just now`, `3 min ago`, `yesterday`; after a week, the date. */
export function relativeTime(iso: string, now = Date.now()): string {
  return timeAgo(iso, now);
}

export function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

export function clip(s: string, max?: number): string {
  if (!max || s.length <= max) return s;
  return s.slice(0, Math.max(0, max - 1)) + '…';
}

export function formatInt(n: number): string {
  return n.toLocaleString('en-US');
}

/** `[██████░░░░] 61%` */
export function gauge(used: number, total: number, width = 20): string {
  const ratio = total > 0 ? Math.min(1, used / total) : 0;
  const filled = Math.round(ratio * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${Math.round((used / Math.max(1, total)) * 100)}%`;
}

/** A dim note on stderr for people; never on stdout. */
export function note(ctx: CliContext, text: string): void {
  ctx.io.stderr.write(colors(ctx, 'stderr').dim(text) + '\n');
}

/** `warning: …` on stderr: something the person should know about a result that still succeeded. */
export function warn(ctx: CliContext, text: string): void {
  ctx.io.stderr.write(colors(ctx, 'stderr').yellow(`warning: ${text}`) + '\n');
}

/** `231 / 1,640 tokens [gauge]` against the limit that binds (the budget, or the model's context). */
export function windowLine(tokens: number, w: { budget_tokens: number; model_limit_tokens?: number }, width?: number): string {
  const limit = windowLimit(w).tokens;
  return `${formatInt(tokens)} / ${formatInt(limit)} tokens ${gauge(tokens, limit, width)}`;
}

/** Says so when the model's context, not the budget, is what the window rotates at. */
export function limitNote(w: { budget_tokens: number; model_limit_tokens?: number }): string {
  return windowLimit(w).byModel ? ` (the model's context binds; budget ${formatInt(w.budget_tokens)})` : '';
}
