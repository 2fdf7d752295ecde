/**
 * Two reads and a write an MCP client wants of an entity (docs/mcp.md), as extensions of the
 * entity API: the ranked retriever in a token budget, and an exchange recorded without a model call.
 */
import type { TranscriptMessage } from './entity-types.js';

/** GET /v1/entities/{id}/recall?q=&max_tokens=: what the ranked retriever finds for `q`, within `max_tokens`. */
export interface RecallInput {
  q: string;
  max_tokens?: number;
}

/** The retriever's lines `#seq role (date): text`, in transcript order, and the messages they hold. */
export interface RecallResult {
  object: 'entity.recall';
  entity_id: string;
  /** '' when nothing was found. */
  text: string;
  /** Estimated tokens of `text` (never over the request's max_tokens). */
  tokens: number;
  messages: Array<{ seq: number; role: 'user' | 'assistant'; tokens: number }>;
}

/** The default and the largest budget of a recall. */
export const RECALL_MAX_TOKENS_DEFAULT = 1000;
export const RECALL_MAX_TOKENS_MAX = 20_000;

/**
 * POST /v1/entities/{id}/exchanges: one exchange, a user message and its reply, stored as a turn
 * stores them but with no model call (nothing billed). The transcript alternates user and assistant,
 * so an exchange is the unit: a note is `content` with a short `reply`.
 */
export interface ExchangeInput {
  content: string;
  reply: string;
}

/** The two messages stored. */
export interface ExchangeResult {
  object: 'list';
  entity_id: string;
  data: TranscriptMessage[];
}
