import type { CompleteInput } from '../backend.js';

/**
 * The OpenAI contract's request shapes, built from the CLI's internal types: the one place the
 * remote backend turns a completion into the JSON body of POST /v1/chat/completions.
 */

/** A chat message as OpenAI's wire carries it. */
export interface WireChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** The chat's messages: the system prompt (when given), then the question. */
export function completionMessages(input: CompleteInput): WireChatMessage[] {
  return [...(input.system !== undefined ? [{ role: 'system' as const, content: input.system }] : []), { role: 'user', content: input.prompt }];
}

/** The streamed request body for POST /v1/chat/completions; the sampling fields already carry OpenAI's names. */
export function completionBody(input: CompleteInput): Record<string, unknown> {
  return { model: input.model, messages: completionMessages(input), ...input.sampling, stream: true };
}
