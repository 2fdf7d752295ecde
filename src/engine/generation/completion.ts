import type { EntityCompletion, FinishReason, Usage } from '../../core/wire/entity-types.js';
import type { ProviderUsage } from '../../providers/spec.js';
import { type Reply, replyMessage } from './reply.js';

/** What a reply is counted as: the provider's counts where it gave them, else the engine's estimates. */
export function settledUsage(counted: ProviderUsage | undefined, estimate: { input: number; output: number }): ProviderUsage {
  const u: ProviderUsage = { inputTokens: counted?.inputTokens ?? estimate.input, outputTokens: counted?.outputTokens ?? estimate.output };
  if (counted?.cachedTokens !== undefined) u.cachedTokens = counted.cachedTokens;
  return u;
}

/** Usage in the completion's (OpenAI's) terms. */
export function wireUsage(u: ProviderUsage): Usage {
  const out: Usage = { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens };
  if (u.cachedTokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cachedTokens };
  return out;
}

/** What names a completion: its id, its creation second and the model it shows. */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
}

/**
 * The one place a reply becomes a chat completion (the entity seed's and OpenAI's shape): what a
 * turn returns and stores under its idempotency key, and what a stateless completion returns.
 */
export function chatCompletion(head: CompletionHead, reply: Reply, usage: ProviderUsage, finish: FinishReason = reply.finish): Omit<EntityCompletion, 'entity_id'> {
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [{ index: 0, message: replyMessage(reply), finish_reason: finish }],
    usage: wireUsage(usage),
  };
}
