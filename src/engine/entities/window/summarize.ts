import type { TokenEstimator } from '../../../core/text/tokens.js';
import type { ChatMessage, ProviderUsage } from '../../../providers/spec.js';
import type { BlockRow } from '../../../store/types.js';
import { ContextOverflowError } from '../../../core/errors.js';
import { type Route, readGeneration } from '../../generation/model-call.js';
import { windowMessages } from './window-state.js';
import { CONTEXT_MARGIN, PER_MESSAGE_TOKENS, PER_PROMPT_TOKENS, type RouteCalibration, type RouteFit, promptEstimate, promptEstimateOf } from '../../generation/calibration.js';

export const SUMMARY_INSTRUCTIONS =
  'You maintain the long-term memory of a conversation. Summarize the conversation below so that ' +
  'the speaker can continue it: keep names, facts, decisions, open questions and the tone. If it ' +
  'starts with an earlier summary, fold that summary in. Write plain prose, no preamble.';

/**
 * The last message of a summary request in the conversation's own form: the instructions and the
 * span's blocks come first, exactly as the entity's last turn sent them, so a provider's prompt
 * cache (llama.cpp, OpenAI, Anthropic: all by prefix) serves the whole span; this message asks
 * the entity to fold it.
 */
export const FOLD_REQUEST =
  'Pause the conversation. Write your long-term memory of everything above (after the standing ' +
  'instructions): keep names, facts, decisions, open questions and the tone, so you can continue ' +
  'from it alone. Fold any earlier summary in. Plain prose, no preamble; do not reply to the last message.';

/** Tokens a transcript line adds besides its text (`user: `, the newline). */
const LINE_TOKENS = 3;

/**
 * The rotation summary of `span`, at most `maxTokens` estimated tokens. As many of its first blocks
 * as one request to the model holds are sent as the conversation sent them, so a prefix cache
 * serves them; the rest, when the span is larger than that (a context just learned from an
 * overflow), follows as a transcript in pieces, each folding in the summary so far, so the last
 * piece's summary covers the whole span.
 */
export async function summarizeSpan(
  route: Route,
  tok: TokenEstimator,
  span: readonly BlockRow[],
  maxTokens: number,
  fit: RouteFit,
  calibration: RouteCalibration,
  signal: AbortSignal,
  instructions: Head = { text: '', tokens: 0 },
): Promise<Summary> {
  const usage: SummaryUsage = { requests: 0, inputTokens: 0, outputTokens: 0 };
  if (maxTokens <= 0) return { text: '', usage };
  const replyTokens = Math.ceil(maxTokens * fit.factor);
  // As much of the span as one request holds goes in the conversation's own form (the cache serves it).
  const lead = leadingBlocks(tok, span, instructions, fit, replyTokens);
  let summary = '';
  if (lead > 0) {
    summary = tok.truncate(await summarizeOnce(route, calibration, prefixRequest(tok, span.slice(0, lead), instructions, replyTokens, signal), usage), maxTokens);
  }
  // The rest, if any, as a transcript in pieces, each folding in the summary so far.
  const rest = span.slice(lead);
  for (const piece of rest.length ? pieces(rest, tok, pieceCapacity(tok, fit, replyTokens, maxTokens)) : []) {
    const earlier = summary ? `Earlier summary: ${summary}` : undefined;
    const lines = earlier ? [earlier, ...piece.lines] : piece.lines;
    const tokens = piece.tokens + (earlier ? tok.count(earlier) + LINE_TOKENS : 0);
    const request = transcriptRequest(tok, lines.join('\n'), tokens, replyTokens, signal);
    summary = await summarizeOnce(route, calibration, request, usage);
    if (tok.count(summary) > maxTokens) summary = tok.truncate(summary, maxTokens);
  }
  return { text: summary, usage };
}

/** What the conversation sends before its blocks: the instructions, and the pinned memory message when it has one. */
export interface Head {
  text: string;
  tokens: number;
  memory?: { text: string; tokens: number };
}

/** A rotation's summary and what its requests cost. */
export interface Summary {
  text: string;
  usage: SummaryUsage;
}

/** The provider's counts over a summary's requests; `cachedTokens` when the provider said what its cache served. */
export interface SummaryUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
}

/** One request for a summary, and its prompt's estimate (summed from stored counts, never recounted). */
interface SummaryRequest {
  messages: ChatMessage[];
  estimate: number;
  replyTokens: number;
  signal: AbortSignal;
}

/**
 * How many of the span's first blocks one request in the conversation's form holds (instructions,
 * the blocks, FOLD_REQUEST, and room for the summary); 0 when that is not even one message, since
 * a summary must fold something new.
 */
function leadingBlocks(tok: TokenEstimator, span: readonly BlockRow[], instructions: Head, fit: RouteFit, replyTokens: number): number {
  let tokens = tok.count(FOLD_REQUEST) + (instructions.text ? instructions.tokens : 0) + (instructions.memory?.tokens ?? 0);
  let messages = (instructions.text ? 2 : 1) + (instructions.memory ? 1 : 0);
  const room = fit.contextTokens === undefined ? Infinity : fit.contextTokens * CONTEXT_MARGIN - replyTokens;
  let lead = 0;
  let lastMessage = 0;
  for (const b of span) {
    tokens += b.tokens;
    messages++;
    if (promptEstimateOf(tokens, messages) * fit.factor > room) break;
    lead++;
    if (b.kind === 'message') lastMessage = lead;
  }
  return lastMessage;
}

/** The span's first blocks as the conversation sent them (instructions, pinned memory, then the blocks), then FOLD_REQUEST. */
function prefixRequest(tok: TokenEstimator, blocks: readonly BlockRow[], instructions: Head, replyTokens: number, signal: AbortSignal): SummaryRequest {
  const { memory } = instructions;
  const counts = [...(instructions.text ? [instructions.tokens] : []), ...(memory ? [memory.tokens] : []), ...blocks.map((b) => b.tokens), tok.count(FOLD_REQUEST)];
  const messages = [...windowMessages(instructions.text, blocks), { role: 'user' as const, content: FOLD_REQUEST }];
  if (memory) messages.splice(instructions.text ? 1 : 0, 0, { role: 'system', content: memory.text });
  return { messages, estimate: promptEstimate(counts), replyTokens, signal };
}

/** A span too big for one request, one piece of it as a transcript under SUMMARY_INSTRUCTIONS. */
function transcriptRequest(tok: TokenEstimator, transcript: string, transcriptTokens: number, replyTokens: number, signal: AbortSignal): SummaryRequest {
  const messages: ChatMessage[] = [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    { role: 'user', content: transcript },
  ];
  return { messages, estimate: promptEstimate([tok.count(SUMMARY_INSTRUCTIONS), transcriptTokens]), replyTokens, signal };
}

/** The transcript lines one summary request may carry, in estimated tokens; unbounded while the context is unknown. */
function pieceCapacity(tok: TokenEstimator, fit: RouteFit, replyTokens: number, maxTokens: number): number {
  if (fit.contextTokens === undefined) return Infinity;
  const usable = Math.floor(fit.contextTokens * CONTEXT_MARGIN) - replyTokens;
  const fixed = tok.count(SUMMARY_INSTRUCTIONS) + 2 * PER_MESSAGE_TOKENS + PER_PROMPT_TOKENS;
  // The summary so far rides along with every piece after the first.
  return Math.max(16, Math.floor(usable / fit.factor) - fixed - maxTokens - LINE_TOKENS);
}

/** A group of transcript lines and their estimated tokens. */
interface Piece {
  lines: string[];
  tokens: number;
}

/** The span as transcript lines, grouped so each group fits `capacity`; a line larger than that is cut to it. */
function pieces(span: readonly BlockRow[], tok: TokenEstimator, capacity: number): Piece[] {
  const out: Piece[] = [];
  let current: string[] = [];
  let used = 0;
  for (const b of span) {
    let line = b.kind === 'summary' ? `Earlier summary: ${b.content}` : `${b.role}: ${b.content}`;
    let cost = b.tokens + LINE_TOKENS;
    if (cost > capacity) {
      line = tok.truncate(line, capacity - LINE_TOKENS);
      cost = capacity;
    }
    if (used + cost > capacity && current.length) {
      out.push({ lines: current, tokens: used });
      current = [];
      used = 0;
    }
    current.push(line);
    used += cost;
  }
  if (current.length) out.push({ lines: current, tokens: used });
  return out;
}

/**
 * One summary request. Its prompt teaches the route's calibration like a reply's does: the
 * instructions and a transcript count differently from chat, and a refusal must be learned from
 * before the turn is planned again.
 */
async function summarizeOnce(route: Route, calibration: RouteCalibration, req: SummaryRequest, usage: SummaryUsage): Promise<string> {
  const { messages, estimate } = req;
  const { model } = route;
  try {
    const reply = await readGeneration(route, { messages, maxTokens: req.replyTokens, purpose: 'summary', signal: req.signal });
    usage.requests++;
    if (reply.usage) {
      await calibration.observe(model.routeKey, estimate, reply.usage.inputTokens);
      addUsage(usage, reply.usage);
    }
    return reply.text.trim();
  } catch (err) {
    if (err instanceof ContextOverflowError) await calibration.learn(model.routeKey, err, estimate, req.replyTokens);
    throw err;
  }
}

function addUsage(sum: SummaryUsage, u: ProviderUsage): void {
  sum.inputTokens += u.inputTokens;
  sum.outputTokens += u.outputTokens;
  if (u.cachedTokens !== undefined) sum.cachedTokens = (sum.cachedTokens ?? 0) + u.cachedTokens;
}

/** The summary block that takes the place of `span` (at its first block's position), covering `covers`. */
export function summaryBlock(id: string, span: readonly BlockRow[], content: string, tokens: number, covers: readonly [number, number]): BlockRow {
  return { id, position: span[0].position, kind: 'summary', role: 'system', content, tokens, coversFrom: covers[0], coversTo: covers[1] };
}
