import { BadRequestError } from '../core/errors.js';
import type { Entity } from '../core/wire/entity-types.js';
import { type Fitted, fitLines, maxTokensOf } from './budget.js';
import { cursorInt, cursorText, makeCursor, moreLine, readCursor } from './cursor.js';
import type { ToolResult } from './tool.js';

/**
 * One entity's list read in pages (transcript, window, rotations): where this page starts, from
 * `start` or the cursor, which must be this tool's for this entity (and `key`, e.g. the window's `at`).
 */
export function pageStart(tool: string, args: Record<string, unknown>, entity: Entity, start: number, key = ''): number {
  if (args.cursor === undefined) return start;
  const state = readCursor(tool, args.cursor as string);
  if (cursorText(tool, state, 'e') !== entity.id || cursorText(tool, state, 'k') !== key) {
    throw new BadRequestError(`${tool}: the cursor belongs to another ${key ? 'entity or query' : 'entity'}`, { hint: 'call it again without cursor to start from the first page' });
  }
  return cursorInt(tool, state, 'at', 0);
}

/** A page of an entity's list: `lines[i]` is item `first + i`; `total` items in all. */
export interface EntityPage {
  tool: string;
  entity: Entity;
  head: string;
  lines: string[];
  first: number;
  total: number;
  what: string;
  key?: string;
}

/** The page fitted to max_tokens, with the cursor of the next one while items are left. */
export async function entityPage(p: EntityPage, args: Record<string, unknown>): Promise<ToolResult & { fitted: Fitted }> {
  const next = (taken: number) => (p.first + taken < p.total ? makeCursor(p.tool, { e: p.entity.id, k: p.key ?? '', at: p.first + taken }) : undefined);
  const fitted = await fitLines(p.head, p.lines, maxTokensOf(args), (taken) => moreLine(next(taken), p.what));
  const cursor = next(fitted.taken);
  return { text: fitted.text, fitted, structured: { entity_id: p.entity.id, tokens: fitted.tokens, ...(cursor ? { next_cursor: cursor } : {}) } };
}
