import type { EntityCompletion, FinishReason } from '../../core/wire/entity-types.js';
import type { ProviderUsage, StreamPart } from '../../providers/spec.js';

/** A tool call as the provider streamed it: its arguments are the model's raw JSON text. */
export interface ReplyToolCall {
  callId: string;
  name: string;
  arguments: string;
}

/** What a provider stream amounts to, read once (by model-call.ts): every generation gets one. */
export interface Reply {
  text: string;
  toolCalls: ReplyToolCall[];
  usage?: ProviderUsage;
  finish: FinishReason;
}

export function emptyReply(): Reply {
  return { text: '', toolCalls: [], finish: 'stop' };
}

/**
 * Takes one stream part into the reply and returns the text it added ('' for other parts), so a
 * caller that streams passes it on. A provider error part is thrown.
 */
export function absorb(reply: Reply, part: StreamPart): string {
  switch (part.type) {
    case 'text-delta':
      reply.text += part.text;
      return part.text;
    case 'tool-call':
      reply.toolCalls.push({ callId: part.callId, name: part.name, arguments: part.arguments });
      reply.finish = 'tool_calls';
      return '';
    case 'usage':
      reply.usage = part.usage;
      return '';
    case 'finish':
      reply.finish = finishReason(part.reason, reply.toolCalls.length > 0);
      return '';
    case 'error':
      throw part.error;
  }
}

/** The provider's finish reason in OpenAI's terms; anything unknown is a normal stop. */
function finishReason(reason: string, calledTools: boolean): FinishReason {
  if (reason === 'length' || reason === 'content_filter') return reason;
  return reason === 'tool_calls' || calledTools ? 'tool_calls' : 'stop';
}

/** The reply as the completion's message: its text, and its tool calls in OpenAI's shape. */
export function replyMessage(out: Reply): EntityCompletion['choices'][0]['message'] {
  if (!out.toolCalls.length) return { role: 'assistant', content: out.text };
  const calls = out.toolCalls.map((c) => ({ id: c.callId, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  return { role: 'assistant', content: out.text, tool_calls: calls };
}
