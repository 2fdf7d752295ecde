import { BadRequestError } from '../core/errors.js';

/**
 * A page's position, opaque to the client: base64url JSON naming its tool and what the next page
 * reads from. A cursor from another tool, another query, or no tool at all is refused plainly.
 */
export function makeCursor(tool: string, state: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ t: tool, ...state })).toString('base64url');
}

export function readCursor(tool: string, cursor: string): Record<string, unknown> {
  const refused = () => new BadRequestError(`${tool}: cursor ${JSON.stringify(cursor.slice(0, 40))} is not one ${tool} gave`, { hint: 'call it again without cursor to start from the first page' });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refused();
  }
  if (typeof state !== 'object' || state === null || Array.isArray(state) || (state as { t?: unknown }).t !== tool) throw refused();
  return state as Record<string, unknown>;
}

/** A cursor's whole-number field, or the cursor is refused. */
export function cursorInt(tool: string, state: Record<string, unknown>, field: string, min = 0): number {
  const v = state[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new BadRequestError(`${tool}: the cursor is damaged (${field})`, { hint: 'call it again without cursor to start from the first page' });
  return v;
}

/** A cursor's text field, or the cursor is refused. */
export function cursorText(tool: string, state: Record<string, unknown>, field: string): string {
  const v = state[field];
  if (typeof v !== 'string') throw new BadRequestError(`${tool}: the cursor is damaged (${field})`, { hint: 'call it again without cursor to start from the first page' });
  return v;
}

/** The footer that tells a model how to read on. */
export function moreLine(cursor: string | undefined, what: string): string {
  return cursor === undefined ? '' : `[more ${what}: call again with cursor "${cursor}"]`;
}
