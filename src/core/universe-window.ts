/**
 * The 64/16 block window of universe prompts (docs/design.md#the-6416-window), pure.
 *
 * A block is one message of `runtime.conversation`. With n messages the window starts at
 * s = 0 when n <= 64, else s = 16 * ceil((n - 64) / 16), then moves forward to the next user
 * message so a tool-call group is never split. The start moves only in steps of 16, so the
 * provider's prompt cache stays warm for 16 messages at a time.
 */

export const WINDOW_MAX = 64;
export const WINDOW_STEP = 16;

export interface RoleOnly {
  role: string;
}

export interface UniverseWindow {
  /** Index of the first message in the window. */
  start: number;
  /** The formula's start before alignment. */
  formulaStart: number;
  /** True when alignment moved the start to reach a user message. */
  aligned: boolean;
}

export function formulaStart(n: number): number {
  return n <= WINDOW_MAX ? 0 : WINDOW_STEP * Math.ceil((n - WINDOW_MAX) / WINDOW_STEP);
}

export function universeWindow(messages: readonly RoleOnly[]): UniverseWindow {
  const s = formulaStart(messages.length);
  let start = s;
  while (start < messages.length && messages[start].role !== 'user') start++;
  // No user message after s (one long tool exchange): fall back to the last one before it.
  if (start === messages.length && s > 0) {
    start = s;
    while (start > 0 && messages[start].role !== 'user') start--;
  }
  if (messages.length === 0) start = 0;
  return { start, formulaStart: s, aligned: start !== s };
}

/**
 * Whether cutting the conversation to its first `p` messages splits a tool-call group: the
 * assistant message that asked for tools and the results that answer it belong together.
 */
export function splitsToolGroup(messages: ReadonlyArray<RoleOnly & { tool_calls?: unknown[] }>, p: number): boolean {
  if (p <= 0 || p >= messages.length) return false;
  const before = messages[p - 1];
  return messages[p].role === 'tool' || (before.role === 'assistant' && Array.isArray(before.tool_calls) && before.tool_calls.length > 0);
}
