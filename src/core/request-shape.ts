/**
 * The one shape every provider request has (docs/entities-and-memory.md#the-request-mgpt-sends),
 * pure: at most one leading `system` message, then user and assistant messages that strictly
 * alternate, starting with a user message. The published chat templates of open models (Gemma,
 * Mistral, Llama, Qwen) refuse or garble anything else: Gemma's and Mistral's raise "Conversation
 * roles must alternate", others drop or misplace a second system message. Tool rounds keep the
 * provider's own protocol (an assistant message with calls, then one `tool` message per call).
 */
import type { ChatContentPart, ChatMessage } from './chat.js';

/** What stands for the user before a conversation that starts with an assistant message (its question was folded or cut). */
export const CONTINUED = '(continued)';

/** How two texts of one role (or two system texts) are joined. */
export const JOIN = '\n\n';

/**
 * `messages` in the shape: every system text joined, in order, into one leading system message;
 * two messages of one role in a row (an import, a failed turn's question before its retry) made
 * one; a conversation that starts with an assistant reply gets a user line before it. The same
 * array when it already has the shape, so the common case copies nothing.
 */
export function shapeMessages(messages: ChatMessage[]): ChatMessage[] {
  if (hasShape(messages)) return messages;
  const system: string[] = [];
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      if (m.content) system.push(m.content);
      continue;
    }
    const last = out[out.length - 1];
    if (!last && m.role !== 'user') out.push({ role: 'user', content: CONTINUED });
    if (last && mergeable(last, m)) out[out.length - 1] = merged(last, m);
    else out.push(m);
  }
  return system.length ? [{ role: 'system', content: system.join(JOIN) }, ...out] : out;
}

/** Whether `messages` is already in the shape (see shapeMessages). */
export function hasShape(messages: readonly ChatMessage[]): boolean {
  const start = messages[0]?.role === 'system' ? 1 : 0;
  if (start < messages.length && messages[start].role !== 'user') return false;
  for (let i = start + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'system' || mergeable(messages[i - 1], m)) return false;
  }
  return true;
}

/** Two neighbours that the templates would refuse side by side and that can be one message. */
function mergeable(a: ChatMessage, b: ChatMessage): boolean {
  if (a.role !== b.role) return false;
  if (a.role === 'user') return true;
  return a.role === 'assistant' && b.role === 'assistant' && !a.tool_calls?.length && !b.tool_calls?.length;
}

function merged(a: ChatMessage, b: ChatMessage): ChatMessage {
  if (a.role === 'user' && b.role === 'user') {
    if (typeof a.content === 'string' && typeof b.content === 'string') return { role: 'user', content: a.content + JOIN + b.content };
    return { role: 'user', content: [...parts(a.content), { type: 'text', text: JOIN }, ...parts(b.content)] };
  }
  const texts = [a.content, b.content].filter((t): t is string => typeof t === 'string' && t !== '');
  return { role: 'assistant', content: texts.join(JOIN) };
}

function parts(content: string | ChatContentPart[]): ChatContentPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
