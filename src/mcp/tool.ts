import type { Backend } from '../core/backend.js';
import type { ArgsSpec } from './args.js';

/** What changed, so subscribed clients are told (resources.ts): an entity's window, or one of its memory blocks (`label`; '' for all). */
export type Change = { entityId: string; window?: true; label?: string };

/** What a tool runs with: the backend of the account, and where it reports what it changed. */
export interface ToolContext {
  backend: Backend;
  changed(change: Change): void;
  signal?: AbortSignal;
}

/** A tool's answer: the text a model reads, and the same in fields for a program. */
export interface ToolResult {
  text: string;
  structured?: Record<string, unknown>;
}

export interface Tool {
  name: string;
  title: string;
  /** What a model reads to decide when and how to call it. */
  description: string;
  args: ArgsSpec;
  /** Reads only (MCP's readOnlyHint); a write may also be destructive (destructiveHint). */
  readOnly: boolean;
  destructive?: boolean;
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<ToolResult>;
}

/** `2026-11-27 22:48`: a line's date, to the minute, as recall shows it. */
export function minute(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}
