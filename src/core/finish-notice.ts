import type { EntityCompletion } from './entity-types.js';

/** What to tell a person when a reply ended short ("reply cut at N tokens"); undefined when it is whole. */
export function cutNotice(c: Omit<EntityCompletion, 'entity_id'>): string | undefined {
  const reason = c.choices[0]?.finish_reason;
  if (reason === 'length') {
    return `reply cut at ${c.usage.completion_tokens} tokens (the route's maxTokens or the model's context); raise it with: mgpt config set models.${c.model}.maxTokens N`;
  }
  if (reason === 'content_filter') return "reply cut short by the provider's content filter";
  return undefined;
}
