import { type TokenEstimator, loadTokenEstimator } from '../core/text/tokens.js';
import type { ArgSpec } from './args.js';

/**
 * Every tool's result fits its `max_tokens` (docs/mcp.md#budgets): small by default, so a call
 * never floods a client's context, with a cursor to read on. Counted with the engine's estimator.
 */
export const MAX_TOKENS_DEFAULT = 1000;
export const MAX_TOKENS_MIN = 100;
export const MAX_TOKENS_MAX = 20_000;

export const MAX_TOKENS_ARG: ArgSpec = {
  type: 'integer',
  description: `the most tokens the result may take (default ${MAX_TOKENS_DEFAULT}); a longer one is cut and gives a cursor to read on`,
  minimum: MAX_TOKENS_MIN,
  maximum: MAX_TOKENS_MAX,
};

export function maxTokensOf(args: Record<string, unknown>): number {
  return (args.max_tokens as number | undefined) ?? MAX_TOKENS_DEFAULT;
}

/** A page of lines in a budget: what was taken, and the text a client reads. */
export interface Fitted {
  text: string;
  tokens: number;
  /** How many of the lines it holds (the last may be cut). */
  taken: number;
  /** Whether the last line taken was cut to fit. */
  cut: boolean;
}

/**
 * The head, then as many whole lines as fit with the footer `more(taken)` (the cursor line, or
 * nothing when none is left); a first line too long for the budget alone is cut to fit, so a page
 * always moves on. Lines are counted once each (a page of 500 is not tokenized 500 times); the
 * text is counted whole at the end and a line given back in the rare case joining made it longer.
 */
export async function fitLines(head: string, lines: readonly string[], maxTokens: number, more: (taken: number) => string): Promise<Fitted> {
  const tok = await loadTokenEstimator();
  const build = (kept: readonly string[], taken: number) => [head, ...kept, more(taken)].filter((p) => p !== '').join('\n');
  let used = tok.count(head) + 1;
  const kept: string[] = [];
  for (const line of lines) {
    const cost = tok.count(line) + 1;
    if (used + cost + tok.count(more(kept.length + 1)) > maxTokens) break;
    kept.push(line);
    used += cost;
  }
  while (kept.length && tok.count(build(kept, kept.length)) > maxTokens) kept.pop();
  if (kept.length === 0 && lines.length > 0) return cutFirst(tok, head, lines[0]!, maxTokens, more);
  const text = build(kept, kept.length);
  return { text, tokens: tok.count(text), taken: kept.length, cut: false };
}

/** A first line longer than the whole budget: as much of it as fits, marked, so the next page starts after it. */
function cutFirst(tok: TokenEstimator, head: string, line: string, maxTokens: number, more: (taken: number) => string): Fitted {
  const frame = [head, '[cut]', more(1)].filter((p) => p !== '').join('\n');
  let room = maxTokens - tok.count(frame) - 2;
  while (room > 0) {
    const text = [head, `${tok.truncate(line, room)} [cut]`, more(1)].filter((p) => p !== '').join('\n');
    const tokens = tok.count(text);
    if (tokens <= maxTokens) return { text, tokens, taken: 1, cut: true };
    room -= tokens - maxTokens;
  }
  const text = [head, more(0)].filter((p) => p !== '').join('\n');
  return { text, tokens: tok.count(text), taken: 0, cut: false };
}
