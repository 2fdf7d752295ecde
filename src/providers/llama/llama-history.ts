import type { ChatMessage } from '../spec.js';

type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;
type ChatModelResponse = import('node-llama-cpp').ChatModelResponse;
type ChatModelFunctionCall = import('node-llama-cpp').ChatModelFunctionCall;

/**
 * The engine's OpenAI-shape messages as node-llama-cpp chat history, ending with the reply to
 * generate. An assistant message's tool calls become function-call items of its model response,
 * each carrying the result of the `tool` message that answers it, so the model sees the call and
 * what came back in its template's own syntax. A reply after tool results continues that response,
 * as the model would have gone on after reading them.
 */
export function toChatHistory(messages: ChatMessage[]): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = [];
  const calls = new Map<string, ChatModelFunctionCall>();
  for (const m of messages) {
    if (m.role === 'system') items.push({ type: 'system', text: m.content });
    else if (m.role === 'user') items.push({ type: 'user', text: userText(m.content) });
    else if (m.role === 'assistant') addAssistant(items, calls, m);
    else addToolResult(items, calls, m);
  }
  if (!endsAfterToolResults(items)) items.push({ type: 'model', response: [] });
  return items;
}

function userText(c: Extract<ChatMessage, { role: 'user' }>['content']): string {
  return typeof c === 'string' ? c : c.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function addAssistant(items: ChatHistoryItem[], calls: Map<string, ChatModelFunctionCall>, m: Extract<ChatMessage, { role: 'assistant' }>): void {
  const continues = endsAfterToolResults(items);
  if (!continues && !m.content && !m.tool_calls?.length) return;
  const response = continues ? (items.at(-1) as ChatModelResponse).response : [];
  if (!continues) items.push({ type: 'model', response });
  if (m.content) response.push(m.content);
  for (const c of m.tool_calls ?? []) {
    const call: ChatModelFunctionCall = { type: 'functionCall', name: c.function.name, params: parseJson(c.function.arguments), result: undefined };
    calls.set(c.id, call);
    response.push(call);
  }
}

function addToolResult(items: ChatHistoryItem[], calls: Map<string, ChatModelFunctionCall>, m: Extract<ChatMessage, { role: 'tool' }>): void {
  const call = calls.get(m.tool_call_id);
  if (call) call.result = parseJson(m.content);
  // A result for a call outside the window: the model still reads it, as a note in the conversation.
  else items.push({ type: 'user', text: `Tool result (${m.tool_call_id}): ${m.content}` });
}

/** The last item is a model response whose last part is a function call: the reply continues it. */
function endsAfterToolResults(items: ChatHistoryItem[]): boolean {
  const last = items.at(-1);
  if (last?.type !== 'model') return false;
  const tail = last.response.at(-1);
  return typeof tail === 'object' && tail.type === 'functionCall';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
