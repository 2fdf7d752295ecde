import type { EntityCompletion } from './entity-types.js';
import type { FunctionCallItem, MessageItem, OutputText, ResponseEvent, ResponseObject } from './responses-types.js';

/** An event before it is numbered. */
type Unnumbered = ResponseEvent extends infer E ? (E extends unknown ? Omit<E, 'sequence_number'> : never) : never;

/** What the Responses facade yields: the response announced, text as it comes, and the finished response with what it billed. */
export type ResponseStep =
  | { type: 'start'; response: ResponseObject; recalled?: number }
  | { type: 'delta'; text: string }
  | { type: 'done'; response: ResponseObject; completion: Omit<EntityCompletion, 'entity_id'>; billed?: number };

/**
 * Steps -> OpenAI's streamed events, in the order the SDK's stream helper reads them
 * (test/fixtures/responses/*.events.json): created, in_progress, the message item and its text
 * part opened with the first text, each delta, then the text, part and item closed, each function
 * call as an item with its arguments, and completed (or incomplete). Every event is numbered from 0.
 */
export class ResponseEventWriter {
  private seq = 0;
  private pending?: ResponseObject;
  private text = '';
  private opened = false;

  push(step: ResponseStep): ResponseEvent[] {
    if (step.type === 'start') {
      this.pending = step.response;
      return [this.ev({ type: 'response.created', response: step.response }), this.ev({ type: 'response.in_progress', response: step.response })];
    }
    if (step.type === 'delta') {
      if (step.text === '') return [];
      const out = this.opened ? [] : this.open();
      this.text += step.text;
      return [...out, this.ev({ type: 'response.output_text.delta', item_id: this.messageId, output_index: 0, content_index: 0, delta: step.text, logprobs: [] })];
    }
    return this.finish(step.response);
  }

  /** The failure after the stream started: the response as failed (OpenAI's response.failed). */
  fail(message: string, code: string): ResponseEvent[] {
    if (!this.pending) return [this.ev({ type: 'error', code, message, param: null })];
    return [this.ev({ type: 'response.failed', response: { ...this.pending, status: 'failed', error: { code, message } } })];
  }

  private get messageId(): string {
    return `msg_${this.pending?.id.replace(/^resp_/, '') ?? ''}`;
  }

  private open(): ResponseEvent[] {
    this.opened = true;
    const item: MessageItem = { id: this.messageId, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    const part: OutputText = { type: 'output_text', text: '', annotations: [] };
    return [
      this.ev({ type: 'response.output_item.added', output_index: 0, item }),
      this.ev({ type: 'response.content_part.added', item_id: item.id, output_index: 0, content_index: 0, part }),
    ];
  }

  private finish(response: ResponseObject): ResponseEvent[] {
    const out: ResponseEvent[] = [];
    const message = response.output.find((o): o is MessageItem => o.type === 'message');
    if (message && !this.opened) out.push(...this.open());
    if (message) out.push(...this.closeMessage(message));
    response.output.forEach((item, index) => {
      if (item.type === 'function_call') out.push(...this.call(item, index));
    });
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    out.push(this.ev({ type, response }));
    return out;
  }

  private closeMessage(item: MessageItem): ResponseEvent[] {
    const part = item.content[0] as OutputText;
    const at = { item_id: item.id, output_index: 0, content_index: 0 };
    return [
      this.ev({ type: 'response.output_text.done', ...at, text: part.text, logprobs: [] }),
      this.ev({ type: 'response.content_part.done', ...at, part }),
      this.ev({ type: 'response.output_item.done', output_index: 0, item }),
    ];
  }

  private call(item: FunctionCallItem, index: number): ResponseEvent[] {
    const at = { item_id: item.id, output_index: index };
    return [
      this.ev({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }),
      this.ev({ type: 'response.function_call_arguments.delta', ...at, delta: item.arguments }),
      this.ev({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments }),
      this.ev({ type: 'response.output_item.done', output_index: index, item }),
    ];
  }

  private ev(e: Unnumbered): ResponseEvent {
    return { ...e, sequence_number: this.seq++ } as ResponseEvent;
  }
}

/** One event as OpenAI frames it: its type as the SSE event name, then the JSON. */
export function responseFrame(e: ResponseEvent): string {
  return `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}
