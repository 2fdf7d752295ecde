import { loadTokenEstimator } from '../core/text/tokens.js';
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
 * always moves on.
 */
export async function fitLines(head: string, lines: readonly string[], maxTokens: number, more: (taken: number) => string): Promise<Fitted> {
  const tok = await loadTokenEstimator();
  const count = (parts: string[]) => tok.count(parts.join('\n'));
  const kept: string[] = [head];
  for (const line of lines) {
    if (count([...kept, line, more(kept.length)]) > maxTokens) break;
    kept.push(line);
  }
  let taken = kept.length - 1;
  let cut = false;
  if (taken === 0 && lines.length > 0) {
    const room = maxTokens - count([head, more(1), ' [cut]']) - 2;
    if (room > 0) {
      kept.push(`${tok.truncate(lines[0], room)} [cut]`);
      taken = 1;
      cut = true;
    }
  }
  const footer = more(taken);
  const text = (footer ? [...kept, footer] : kept).filter((p) => p !== '').join('\n');
  return { text, tokens: tok.count(text), taken, cut };
}
