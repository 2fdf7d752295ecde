import type { MemoryRow, MemoryWrite, MemoryWriteResult } from './rows.js';

/**
 * What a memory write does to the blocks stored now (both stores decide it so, inside their
 * transaction): nothing when the text is already so or there is nothing to remove, a refusal when
 * the blocks after it would pass a limit, else the block before and after.
 */
export function memoryOutcome(stored: readonly MemoryRow[], w: MemoryWrite): Exclude<MemoryWriteResult, { kind: 'missing' }> {
  const before = stored.find((b) => b.label === w.label);
  if (w.text === null) return before ? { kind: 'changed', before } : { kind: 'same' };
  if (before && before.text === w.text) return { kind: 'same', before };
  const blocks = stored.length + (before ? 0 : 1);
  const total = stored.reduce((n, b) => n + b.tokens, 0);
  const tokens = total - (before?.tokens ?? 0) + w.tokens;
  // A write that does not grow what is over a (since lowered) limit is let through: it can only help.
  if ((!before && blocks > w.limits.blocks) || (tokens > w.limits.tokens && tokens > total)) return { kind: 'over', blocks, tokens };
  return { kind: 'changed', ...(before ? { before } : {}), after: { label: w.label, text: w.text, tokens: w.tokens, updatedAt: w.at } };
}
