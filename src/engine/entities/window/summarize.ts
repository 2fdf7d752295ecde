import type { TokenEstimator } from '../../../core/tokens.js';
import type { ChatMessage, ChatModel } from '../../../providers/spec.js';
import type { BlockRow } from '../../../store/types.js';
import { ContextOverflowError } from '../../../core/errors.js';
import { readReply } from '../../generation/reply.js';
import { CONTEXT_MARGIN, PER_MESSAGE_TOKENS, PER_PROMPT_TOKENS, type RouteCalibration, type RouteFit, promptEstimate } from '../../generation/calibration.js';

export const SUMMARY_INSTRUCTIONS =
  'You maintain the long-term memory of a conversation. Summarize the conversation below so that ' +
  'the speaker can continue it: keep names, facts, decisions, open questions and the tone. If it ' +
  'starts with an earlier summary, fold that summary in. Write plain prose, no preamble.';

/** Tokens a transcript line adds besides its text (`user: `, the newline). */
const LINE_TOKENS = 3;

/**
 * The rotation summary of `span`, at most `maxTokens` estimated tokens. When the span does not
 * fit one request to the model, it is summarized in pieces, each folding in the summary so far,
 * so the last piece's summary covers the whole span.
 */
export async function summarizeSpan(
  model: ChatModel,
  tok: TokenEstimator,
  span: readonly BlockRow[],
  maxTokens: number,
  fit: RouteFit,
  calibration: RouteCalibration,
  signal: AbortSignal,
): Promise<string> {
  if (maxTokens <= 0) return '';
  const replyTokens = Math.ceil(maxTokens * fit.factor);
  let summary = '';
  for (const piece of pieces(span, tok, pieceCapacity(tok, fit, replyTokens, maxTokens))) {
    const earlier = summary ? `Earlier summary: ${summary}` : undefined;
    const lines = earlier ? [earlier, ...piece.lines] : piece.lines;
    const tokens = piece.tokens + (earlier ? tok.count(earlier) + LINE_TOKENS : 0);
    const request: SummaryRequest = { transcript: lines.join('\n'), transcriptTokens: tokens, replyTokens, signal };
    summary = await summarizeOnce(model, calibration, tok, request);
    if (tok.count(summary) > maxTokens) summary = tok.truncate(summary, maxTokens);
  }
  return summary;
}

interface SummaryRequest {
  transcript: string;
  /**
   * The transcript's estimate, summed from its lines' stored counts: counting the joined text
   * again would hold the thread for as long as the span is big (a branch folds thousands).
   */
  transcriptTokens: number;
  replyTokens: number;
  signal: AbortSignal;
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
async function summarizeOnce(model: ChatModel, calibration: RouteCalibration, tok: TokenEstimator, req: SummaryRequest): Promise<string> {
  const estimate = promptEstimate([tok.count(SUMMARY_INSTRUCTIONS), req.transcriptTokens]);
  const messages: ChatMessage[] = [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    { role: 'user', content: req.transcript },
  ];
  try {
    const reply = await readReply(model.stream({ messages, maxTokens: req.replyTokens, purpose: 'summary', signal: req.signal }));
    if (reply.usage) await calibration.observe(model.routeKey, estimate, reply.usage.inputTokens);
    return reply.text.trim();
  } catch (err) {
    if (err instanceof ContextOverflowError) await calibration.learn(model.routeKey, err, estimate, req.replyTokens);
    throw err;
  }
}
