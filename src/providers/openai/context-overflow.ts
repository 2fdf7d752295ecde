import { ContextOverflowError } from '../../core/errors.js';

/**
 * Reads a provider's "the prompt is too long" answer, in the shapes the common OpenAI-compatible
 * servers give it, with whatever numbers it reveals:
 * - llama-server: `{error:{type:"exceed_context_size_error", n_prompt_tokens, n_ctx, message}}`
 *   (older builds: "request (N tokens) exceeds the available context size (M tokens)");
 * - OpenAI: `{error:{code:"context_length_exceeded", message:"...maximum context length is M
 *   tokens. However, your messages resulted in N tokens..."}}`;
 * - vLLM: "This model's maximum context length is M tokens. However, you requested N tokens
 *   (P in the messages, C in the completion)";
 * - Ollama: "the input length exceeds the context length" / "prompt too long; exceeded max context length";
 * - llama-server whose context is shared between parallel requests (no -np, or --kv-unified): an
 *   error chunk in the stream, "Context size has been exceeded.", when the requests together ran
 *   out of it (see streamOverflow).
 * Anything else is not an overflow (undefined).
 */
export function parseContextOverflow(status: number, bodyText: string): ContextOverflowError | undefined {
  if (status !== 400 && status !== 413 && status !== 422 && status !== 500) return undefined;
  const body = parseJson(bodyText);
  const err = body?.error && typeof body.error === 'object' ? (body.error as Record<string, unknown>) : body;
  const message = String(err?.message ?? body?.message ?? (typeof body?.error === 'string' ? body.error : '') ?? '') || bodyText.slice(0, 500);
  const type = String(err?.type ?? '');
  const code = String(err?.code ?? '');
  const known = type === 'exceed_context_size_error' || code === 'context_length_exceeded';
  if (!known && !OVERFLOW_TEXT.test(message)) return undefined;
  const contextTokens = num(err?.n_ctx) ?? match(message, CONTEXT_PATTERNS);
  const promptTokens = num(err?.n_prompt_tokens) ?? match(message, PROMPT_PATTERNS);
  // llama-server's words when parallel requests together filled the context they share.
  const shared = SHARED_TEXT.test(message);
  return new ContextOverflowError(`the model's context is too small for this prompt: ${message.trim().slice(0, 300)}`, {
    contextTokens,
    promptTokens,
    shared,
    hint: shared ? SHARED_CONTEXT_HINT : undefined,
  });
}

const SHARED_TEXT = /context size has been exceeded/i;

const OVERFLOW_TEXT =
  /context size has been exceeded|exceeds? the available context size|maximum context length is|context length exceeded|exceeds? (?:the )?(?:max(?:imum)? )?context length|prompt too long|context_length_exceeded|too many tokens for the context/i;

/** Where a message names the model's context. */
const CONTEXT_PATTERNS = [
  /available context size \((\d+) tokens?\)/i,
  /maximum context length is (\d+) tokens?/i,
  /context (?:length|size|window) of (\d+)/i,
  /n_ctx[ =:]+(\d+)/i,
];

/**
 * Where a message names the prompt's size in the model's tokens. vLLM's "you requested N tokens
 * (P in the messages, C in the completion)" names the prompt as P.
 */
const PROMPT_PATTERNS = [
  /\((\d+) in the messages/i,
  /request \((\d+) tokens?\)/i,
  /your messages resulted in (\d+) tokens?/i,
  /prompt (?:has|is|of) (\d+) tokens?/i,
];

function match(text: string, patterns: RegExp[]): number | undefined {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m) return Number(m[1]);
  }
  return undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The hint for a context that parallel requests share and ran out of. */
export const SHARED_CONTEXT_HINT =
  "the server's context is shared between its parallel requests (llama-server without -np, or with --kv-unified): " +
  'mgpt has lowered what one turn sends; to avoid it, give each slot its own context (llama-server -np N -c N*CTX) or lower --concurrency';

/**
 * An error chunk in a stream that says the context ran out: with llama-server, parallel requests
 * filled a context they share, not this prompt alone. Undefined when it is anything else.
 */
export function streamOverflow(error: { message?: string }): ContextOverflowError | undefined {
  const message = String(error.message ?? '');
  if (!SHARED_TEXT.test(message)) return undefined;
  return new ContextOverflowError(`the model's context ran out mid-reply: ${message.trim().slice(0, 300)}`, { shared: true, hint: SHARED_CONTEXT_HINT });
}
