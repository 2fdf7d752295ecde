import type { ToolCallOut, ToolCallRef } from '../../core/wire/universe-types.js';
import type { UniverseMessageRow } from '../../store/types.js';
import type { Reply } from '../generation/reply.js';
import type { Turn } from './universe-turn.js';

export function replyRow(turn: Turn, reply: Reply): UniverseMessageRow {
  if (!reply.toolCalls.length) {
    return turn.newRow({ role: 'assistant', content: reply.text, toolCalls: null, toolCallId: null, toolName: null, toolOk: null });
  }
  const refs: ToolCallRef[] = reply.toolCalls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return turn.newRow({ role: 'assistant', content: reply.text || null, toolCalls: JSON.stringify(refs), toolCallId: null, toolName: null, toolOk: null });
}

export function toolCallsOut(reply: Reply): ToolCallOut[] | undefined {
  return reply.toolCalls.length ? reply.toolCalls.map((c) => ({ callId: c.callId, name: c.name, arguments: parseArguments(c.arguments) })) : undefined;
}

/** The tool calls of the conversation's last message, when it is (or is followed only by results of) a tool-call message. */
export function pendingCalls(messages: UniverseMessageRow[]): ToolCallRef[] {
  const last = lastToolCallMessage(messages);
  return last ? (JSON.parse(last.toolCalls!) as ToolCallRef[]) : [];
}

export function lastToolCallMessage(messages: UniverseMessageRow[]): UniverseMessageRow | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'tool') continue;
    return m.role === 'assistant' && m.toolCalls ? m : undefined;
  }
  return undefined;
}

export function unansweredCalls(messages: UniverseMessageRow[]): ToolCallRef[] {
  return pendingCalls(messages).filter((c) => !answered(messages, c.id));
}

export function answered(messages: UniverseMessageRow[], callId: string): boolean {
  return messages.some((m) => m.role === 'tool' && m.toolCallId === callId);
}

/**
 * When the conversation ends with a final answer and every callId was answered since the last
 * user message (a retried continuation that already completed), the index of that answer.
 */
export function finishedToolTurn(messages: UniverseMessageRow[], callIds: string[]): number | null {
  const last = messages.length - 1;
  if (last < 0 || messages[last].role !== 'assistant' || messages[last].toolCalls) return null;
  let u = last;
  while (u >= 0 && messages[u].role !== 'user') u--;
  const turn = new Set(messages.slice(u + 1).flatMap((m) => (m.role === 'tool' && m.toolCallId ? [m.toolCallId] : [])));
  return callIds.every((id) => turn.has(id)) ? last : null;
}

export function parseArguments(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw || '{}');
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { raw };
  }
}
