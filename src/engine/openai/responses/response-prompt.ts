import { BadRequestError } from '../../../core/errors.js';
import type { ChatMessage, ChatToolCall } from '../../../providers/spec.js';
import type { InputItem, ResponseRequest } from './response-request.js';

/** A tool round a response left open: the user message it answers and the calls waiting for the client's outputs. */
export interface PendingRound {
  content: string;
  round: ChatMessage[];
  calls: string[];
}

/** A request's input, read for a stored turn: the system text it adds, its new user message, and the tool round after it. */
export interface TurnPrompt {
  system?: string;
  content: string;
  round: ChatMessage[];
}

/** The request's own system text: `instructions`, then its system and developer messages (applied to this response only). */
export function systemOf(req: ResponseRequest): string | undefined {
  const texts = [req.instructions ?? '', ...req.input.flatMap((i) => (i.type === 'message' && i.role === 'system' ? [i.text] : []))];
  const joined = texts.filter((t) => t.trim() !== '').join('\n\n');
  return joined === '' ? undefined : joined;
}

/** Input items (system messages left out) as provider messages: consecutive function calls make one assistant message. */
export function chatMessagesOf(items: readonly InputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const it of items) {
    if (it.type === 'message') {
      const last = out[out.length - 1];
      // Two messages of one role in a row (Codex sends its environment, then the task) are one: roles alternate in every request mgpt builds.
      if (it.role !== 'system' && last?.role === it.role && !('tool_calls' in last && last.tool_calls) && typeof last.content === 'string') last.content = `${last.content}\n\n${it.text}`;
      else if (it.role !== 'system') out.push({ role: it.role, content: it.text });
      continue;
    }
    if (it.type === 'function_call_output') {
      out.push({ role: 'tool', content: it.output, tool_call_id: it.callId });
      continue;
    }
    const call: ChatToolCall = { id: it.callId, type: 'function', function: { name: it.name, arguments: it.arguments } };
    const last = out[out.length - 1];
    if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
    else out.push({ role: 'assistant', content: '', tool_calls: [call] });
  }
  return out;
}

/**
 * A stored turn's prompt: one new user message, optionally followed by the tool round the client
 * ran for it (function_call and function_call_output items). Earlier messages are the entity's
 * transcript, so a stored response does not take them.
 */
export function turnPrompt(req: ResponseRequest): TurnPrompt {
  const items = req.input.filter((i) => !(i.type === 'message' && i.role === 'system'));
  const last = items.map((i) => i.type === 'message' && i.role === 'user').lastIndexOf(true);
  if (last === -1) throw new BadRequestError('input needs a user message (or function_call_output items answering the previous response\'s calls)');
  if (items.slice(0, last).some((i) => i.type === 'message')) {
    throw new BadRequestError('a stored response on an entity takes one new user message: the entity keeps the history', {
      hint: 'continue with previous_response_id or conversation, or send the whole history with store: false',
    });
  }
  const after = items.slice(last + 1);
  if (after.some((i) => i.type === 'message')) throw new BadRequestError('only function_call and function_call_output items may follow the user message');
  const content = (items[last] as Extract<InputItem, { type: 'message' }>).text;
  if (content.trim() === '') throw new BadRequestError('the user message is empty');
  return { system: systemOf(req), content, round: chatMessagesOf(after) };
}

/** The prompt that answers an open tool round: the round's calls, each with the client's output. */
export function answeredRound(req: ResponseRequest, pending: PendingRound): TurnPrompt {
  const outputs = new Map<string, string>();
  for (const it of req.input) {
    if (it.type === 'function_call_output') {
      if (!pending.calls.includes(it.callId)) throw new BadRequestError(`No tool call found for function call output with call_id ${it.callId}.`);
      outputs.set(it.callId, it.output);
    } else if (it.type === 'message' && it.role === 'user') {
      throw new BadRequestError(`No tool output found for function call ${pending.calls.find((c) => !outputs.has(c)) ?? pending.calls[0]}.`, {
        hint: 'the previous response called functions: answer each with a function_call_output item',
      });
    }
  }
  const missing = pending.calls.find((c) => !outputs.has(c));
  if (missing) throw new BadRequestError(`No tool output found for function call ${missing}.`);
  const tools: ChatMessage[] = pending.calls.map((c) => ({ role: 'tool', content: outputs.get(c)!, tool_call_id: c }));
  return { system: systemOf(req), content: pending.content, round: [...pending.round, ...tools] };
}

/** The request's system text joined to the first system message (the instructions), or first of all. */
export function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (!system) return messages.slice();
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${system}` }, ...rest];
  return [{ role: 'system', content: system }, ...messages];
}
