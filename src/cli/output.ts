import { Chalk, type ChalkInstance } from 'chalk';
import type { CliContext, Io } from './context.js';

/** Colours for a stream: off with NO_COLOR or when the stream is not a terminal. */
export function colors(ctx: CliContext, stream: 'stdout' | 'stderr' = 'stdout'): ChalkInstance {
  const tty = stream === 'stdout' ? ctx.io.stdoutIsTTY : ctx.io.stderrIsTTY;
  const off = ctx.env.NO_COLOR !== undefined && ctx.env.NO_COLOR !== '';
  return new Chalk({ level: tty && !off ? 1 : 0 });
}

/** Machine output: exactly one JSON document on stdout. */
export function printJson(io: Io, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export interface Column<T> {
  header: string;
  value(row: T): string;
  /** Right-align (numbers). */
  right?: boolean;
  /** Truncate to this many characters on a terminal. */
  max?: number;
}

/** A table on a terminal; tab-separated lines without a header when piped (gh's convention). */
export function printTable<T>(ctx: CliContext, columns: Column<T>[], rows: T[]): void {
  const { io } = ctx;
  if (!io.stdoutIsTTY) {
    for (const r of rows) io.stdout.write(columns.map((c) => oneLine(c.value(r))).join('\t') + '\n');
    return;
  }
  const c = colors(ctx);
  const cells = rows.map((r) => columns.map((col) => clip(oneLine(col.value(r)), col.max)));
  const widths = columns.map((col, i) => Math.max(col.header.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (columns[i].right ? v.padStart(widths[i]) : i === vals.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  io.stdout.write(c.bold(line(columns.map((col) => col.header))) + '\n');
  for (const row of cells) io.stdout.write(line(row) + '\n');
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
