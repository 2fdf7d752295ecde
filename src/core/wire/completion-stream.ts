import type { CompletionChunk, EntityCompletion, FinishReason, TurnEvent } from './entity-types.js';

/** What the chunker reads: an entity turn's events, or any reply told the same way (the OpenAI facade's). */
export type ChunkEvent =
  | Extract<TurnEvent, { type: 'rotation' | 'delta' }>
  | { type: 'start'; id: string; model: string; created: number; replayed?: boolean }
  | { type: 'done'; completion: Omit<EntityCompletion, 'entity_id'>; billed?: number };

/**
 * Turn events -> the seed's stream (docs/design.md#the-reply-stream): content chunks (the first delta carries the role), a
 * final chunk with an empty delta and the reply's finish_reason ("stop", or "length" when cut), a usage chunk with no choices, then
 * the literal [DONE]. Pure, so the server and tests share one definition.
 */
export class CompletionChunker {
  private id = '';
  private model = '';
  private created = 0;
  private first = true;
  private rotation?: CompletionChunk['rotation'];

  /** Chunks for one event (possibly none). */
  push(ev: ChunkEvent): CompletionChunk[] {
    switch (ev.type) {
      case 'start':
        this.id = ev.id;
        this.model = ev.model;
        this.created = ev.created;
        return [];
      case 'rotation': {
        // Told on the usage chunk: a frame of its own would be a chunk no OpenAI client expects.
        const { type: _type, ...rotation } = ev;
        this.rotation = rotation;
        return [];
      }
      case 'delta': {
        const delta = this.first ? { role: 'assistant' as const, content: ev.text } : { content: ev.text };
        this.first = false;
        return [this.chunk(delta, null)];
      }
      case 'done': {
        const out: CompletionChunk[] = [];
        // A reply with no text still opens with the assistant role.
        if (this.first) out.push(this.chunk({ role: 'assistant', content: '' }, null));
        const calls = ev.completion.choices[0]?.message.tool_calls;
        if (calls?.length) out.push(this.chunk({ tool_calls: calls.map((c, index) => ({ index, ...c })) }, null));
        out.push(this.chunk({}, ev.completion.choices[0]?.finish_reason ?? 'stop'));
        const recalled = 'recalled' in ev.completion ? ev.completion.recalled : undefined;
        const rotation = this.rotation ? { rotation: this.rotation } : {};
        out.push({ ...this.base(ev.completion), choices: [], usage: ev.completion.usage, ...(recalled ? { recalled } : {}), ...rotation });
        return out;
      }
      default:
        return [];
    }
  }

  private base(c?: Omit<EntityCompletion, 'entity_id'>) {
    return {
      id: c?.id ?? this.id,
      object: 'chat.completion.chunk' as const,
      created: c?.created ?? this.created,
      model: c?.model ?? this.model,
    };
  }

  private chunk(delta: CompletionChunk['choices'][0]['delta'], finish: FinishReason | null): CompletionChunk {
    return { ...this.base(), choices: [{ index: 0, delta, finish_reason: finish }] };
  }
}

/** One server-sent event frame. */
export function sseFrame(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

export const SSE_DONE = sseFrame('[DONE]');

/**
 * A failure after the stream started (the provider broke off): the status can no longer change,
 * so the stream says why in OpenAI's in-stream error shape (the `openai` SDK throws it as an
 * APIError) and ends without [DONE]. An extension: the seed leaves mid-stream failures open.
 */
export interface StreamErrorFrame {
  error: { message: string; type: string; code: number };
}

export function streamErrorFrame(message: string, status: number): StreamErrorFrame {
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: status } };
}
