import { formatCount, plural } from '../core/text/numbers.js';
import type { EntityCompletion, TurnEvent, Usage } from '../core/wire/entity-types.js';
import { sanitizeForTerminal } from '../core/text/terminal-text.js';

/**
 * The reply-length limit mgpt sent, as the command knows it: the `--max-tokens` asked for, or the
 * route's `maxTokens` and the setting that holds it; `maxTokens` undefined when none was sent.
 */
export interface CutLimit {
  maxTokens?: number;
  /** What set it: "--max-tokens", or "models.NAME.maxTokens". */
  source?: string;
  /** How to raise it. */
  raise?: string;
}

/**
 * What to tell a person when a reply ended short ("reply cut at N tokens"); undefined when it is
 * whole. With `limit` (the local backend knows its routes) it names the limit that cut it: mgpt's,
 * or the model server's own; without it (a remote server's routes), both.
 */
export function cutNotice(c: Omit<EntityCompletion, 'entity_id'>, limit?: CutLimit): string | undefined {
  const reason = c.choices[0]?.finish_reason;
  if (reason === 'content_filter') return "reply cut short by the provider's content filter";
  if (reason !== 'length') return undefined;
  const n = c.usage.completion_tokens;
  if (!limit) return `reply cut at ${n} tokens (the server's maxTokens for ${c.model}, or the model's context)`;
  if (limit.maxTokens !== undefined && n >= limit.maxTokens) {
    return `reply cut at ${n} tokens: the ${limit.source} limit (${limit.maxTokens})${limit.raise ? `; raise it with: ${limit.raise}` : ''}`;
  }
  const sent = limit.maxTokens === undefined ? 'mgpt sent no max_tokens' : `mgpt allowed ${limit.maxTokens}`;
  return `reply cut at ${n} tokens by the model server itself (${sent}): its own reply limit (llama-server -n) or its context; raise those where the server runs`;
}

/** A turn's or a summary's token counts: `812 prompt (790 from the provider's cache) + 48 completion tokens`. */
export function usageText(u: Usage): string {
  // A provider that reports no usage (and a summary made before counts were kept) says 0 + 0, which is not what it cost.
  if (!u.prompt_tokens && !u.completion_tokens) return 'no token counts (the provider reported none)';
  const cached = u.prompt_tokens_details ? ` (${formatCount(u.prompt_tokens_details.cached_tokens)} from the provider's cache)` : '';
  return `${formatCount(u.prompt_tokens)} prompt${cached} + ${formatCount(u.completion_tokens)} completion tokens`;
}

/** What a rotation did, and with `verbose` what its summary requests cost. */
export function rotationNotice(ev: Extract<TurnEvent, { type: 'rotation' }>, verbose: boolean): string {
  const text = `window rotated: messages ${ev.covers[0]}–${ev.covers[1]} were folded into a ${formatCount(ev.summaryTokens)}-token summary (window now ${formatCount(ev.windowTokens)} tokens)`;
  if (!verbose || !ev.summaryUsage) return text;
  const u = ev.summaryUsage;
  return u.prompt_tokens || u.completion_tokens ? `${text}; the summary took ${usageText(u)}` : `${text}; the provider reported no token counts for the summary`;
}

/**
 * What automatic recall put in a turn's prompt: `recalled 4 messages (#1, #2, #57, #58), 212 tokens`,
 * then each message's text as the prompt carried it, a line each (`  #1 user: …`); undefined for nothing.
 */
export function recallNotice(recalled: EntityCompletion['recalled']): string | undefined {
  if (!recalled?.length) return undefined;
  const tokens = recalled.reduce((sum, m) => sum + m.tokens, 0);
  const seqs = recalled.map((m) => `#${m.seq}`).join(', ');
  const head = `recalled ${plural(recalled.length, 'message')} (${seqs}), ${plural(tokens, 'token')}`;
  // A server from before the text was carried sends seqs only.
  const lines = recalled.filter((m) => m.content !== undefined).map((m) => `  #${m.seq} ${m.role}: ${oneLine(m.content ?? '')}`);
  return [head, ...lines].join('\n');
}

/** A transcript message on one terminal line: no escape sequence of it reaches the screen, its line breaks shown as ⏎. */
function oneLine(text: string): string {
  return sanitizeForTerminal(text.replace(/\r?\n/g, ' ⏎ '));
}
