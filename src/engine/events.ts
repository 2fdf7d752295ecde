import { ContextOverflowError, ProviderError, type ProviderFailure } from '../core/errors.js';

/**
 * What the engine tells an observer as it works: `mgpt serve`'s /metrics counts these. The engine
 * never waits on an observer and gives it no ids (metrics carry no account, key or entity).
 */
export interface EngineEvents {
  /** A generation that completed: an entity turn, a universe turn, one through the OpenAI facade, or a side request. */
  turn(kind: TurnKind, seconds: number, firstTokenSeconds: number | undefined): void;
  /** A rotation committed with its turn. */
  rotation(): void;
  /** Requests a rotation's summary made (one, or more for a span in pieces). */
  summaryRequests(n: number): void;
  /** A provider call that failed, by class (context, timeout, http_4xx, http_5xx, connection, other). */
  providerError(cls: string): void;
  /** A turn refused because another held the entity or universe. */
  leaseConflict(): void;
  /** The prompt tokens a generation sent, and of them what the provider's cache served (when it said). */
  promptTokens(total: number, cached: number | undefined): void;
  /** A request refused by its key's requests or tokens per minute (429). */
  rateLimited(limit: 'requests' | 'tokens'): void;
  /** A committed turn that automatic recall added earlier messages to: how many, and their tokens. */
  recalled(messages: number, tokens: number): void;
  /** Messages (or questions) semantic recall embedded and stored, or failed to embed (recall then ranked by words). */
  embeddings(outcome: 'stored' | 'failed', messages: number): void;
}

export type TurnKind = 'entity' | 'universe' | 'facade' | 'side';

/** The observer when nobody listens. */
export const NO_EVENTS: EngineEvents = {
  turn() {},
  rotation() {},
  summaryRequests() {},
  providerError() {},
  leaseConflict() {},
  promptTokens() {},
  rateLimited() {},
  recalled() {},
  embeddings() {},
};

/**
 * A provider failure's class, for a label: what went wrong, never which request. Decided by the
 * error's type and the failure it carries (the provider's HTTP status or the transport's error
 * code, docs/design.md#errors-and-their-codes), never by its message.
 */
export function providerErrorClass(err: unknown): ProviderFailure | 'context' {
  if (err instanceof ContextOverflowError) return 'context';
  if (err instanceof ProviderError) return err.failure;
  return 'other';
}
