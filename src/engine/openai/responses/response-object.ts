import type { EntityCompletion, Usage } from '../../../core/wire/entity-types.js';
import type { FunctionCallItem, MessageItem, OutputItem, ResponseObject, ResponseUsage, WireItem } from '../../../core/wire/responses-types.js';
import type { InputItem, ResponseRequest } from './response-request.js';

type Completion = Omit<EntityCompletion, 'entity_id'>;

/** What a response echoes of its request, and who it is. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  previousResponseId: string | null;
  conversation: string | null;
  store: boolean;
}

/** The response before its reply: status in_progress, no output (response.created carries it). */
export function pendingResponse(head: ResponseHead, req: ResponseRequest): ResponseObject {
  const s = req.options.sampling;
  return {
    id: head.id, object: 'response', created_at: head.createdAt, status: 'in_progress', error: null, incomplete_details: null,
    instructions: req.instructions ?? null, max_output_tokens: req.maxOutputTokens ?? null, model: head.model, output: [],
    parallel_tool_calls: req.parallelToolCalls, previous_response_id: head.previousResponseId, reasoning: null, store: head.store,
    temperature: s.temperature ?? null, text: { format: { type: 'text' } }, tool_choice: req.toolChoice, tools: req.wireTools,
    top_p: s.topP ?? null, truncation: req.truncation, usage: null, metadata: req.metadata,
    conversation: head.conversation ? { id: head.conversation } : null,
  };
}

/** Ids of one response's output items, derived from the response's own id so a stored response lists the same ones again. */
export function itemIds(responseId: string): { message: string; call: (i: number) => string } {
  const hex = responseId.replace(/^resp_/, '');
  return { message: `msg_${hex}`, call: (i) => `fc_${hex}_${i}` };
}

/** The finished response: its output items from the reply, usage in the Responses names, and its status. */
export function finishedResponse(pending: ResponseObject, c: Completion): ResponseObject {
  const choice = c.choices[0];
  const cut = choice?.finish_reason === 'length' || choice?.finish_reason === 'content_filter';
  const output = outputItems(pending.id, choice?.message.content ?? '', choice?.message.tool_calls ?? [], cut);
  return {
    ...pending,
    status: cut ? 'incomplete' : 'completed',
    incomplete_details: cut ? { reason: choice.finish_reason === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
    output,
    usage: responseUsage(c.usage),
    output_text: choice?.message.content ?? '',
  };
}

export function outputItems(responseId: string, text: string, calls: NonNullable<Completion['choices'][0]['message']['tool_calls']>, cut = false): OutputItem[] {
  const ids = itemIds(responseId);
  const message: MessageItem = { id: ids.message, type: 'message', role: 'assistant', status: cut ? 'incomplete' : 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  const fcs = calls.map((t, i): FunctionCallItem => ({ id: ids.call(i), type: 'function_call', status: 'completed', call_id: t.id, name: t.function.name, arguments: t.function.arguments }));
  return text !== '' || fcs.length === 0 ? [message, ...fcs] : fcs;
}

export function responseUsage(u: Usage): ResponseUsage {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.total_tokens,
  };
}

/** A failed response (the stream broke off after it started). */
export function failedResponse(pending: ResponseObject, message: string, code: string): ResponseObject {
  return { ...pending, status: 'failed', error: { code, message } };
}

/** The input items as input_items lists them, each with an id of this response. */
export function wireInput(responseId: string, input: InputItem[]): WireItem[] {
  const hex = responseId.replace(/^resp_/, '');
  return input.map((it, i): WireItem => {
    const id = `${it.type === 'message' ? 'msg' : it.type === 'function_call' ? 'fc' : 'fco'}_${hex}_in${i}`;
    if (it.type === 'message') {
      const part = it.role === 'assistant' ? { type: 'output_text' as const, text: it.text, annotations: [] } : { type: 'input_text' as const, text: it.text };
      return { id, type: 'message', role: it.role, status: 'completed', content: [part] };
    }
    if (it.type === 'function_call') return { id, type: 'function_call', status: 'completed', call_id: it.callId, name: it.name, arguments: it.arguments };
    return { id, type: 'function_call_output', status: 'completed', call_id: it.callId, output: it.output };
  });
}
