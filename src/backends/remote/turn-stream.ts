import { ProviderError } from '../../core/errors.js';
import { SseDecoder } from '../../core/wire/sse.js';
import type { CompletionChunk, EntityCompletion, FinishReason, TurnEvent, Usage } from '../../core/wire/entity-types.js';
import type { StreamErrorFrame } from '../../core/wire/completion-stream.js';
import { errorFromResponse } from './errors.js';

/** One entity turn's SSE stream, read by the remote backend. */

/** A streamed turn as it arrives: the first chunk, the text so far, the usage and the finish reason. */
interface StreamedTurn {
  head?: CompletionChunk;
  text: string;
  usage?: Usage;
  recalled?: EntityCompletion['recalled'];
  finish: FinishReason;
}

/** Decodes one turn's SSE stream into the events the local backend yields; a stream that ends before [DONE] throws. */
export async function* turnEvents(body: AsyncIterable<unknown>, id: string, replayed: boolean): AsyncGenerator<TurnEvent> {
  const decoder = new SseDecoder();
  const utf8 = new TextDecoder();
  const turn: StreamedTurn = { text: '', finish: 'stop' };
  for await (const piece of body) {
    for (const data of decoder.push(utf8.decode(piece as Buffer, { stream: true }))) {
      if (data === '[DONE]') {
        yield { type: 'done', completion: completionOf(turn, id), replayed };
        return;
      }
      yield* chunkEvents(turn, JSON.parse(data) as CompletionChunk | StreamErrorFrame, id, replayed);
    }
  }
  throw brokenStream();
}

function* chunkEvents(turn: StreamedTurn, chunk: CompletionChunk | StreamErrorFrame, id: string, replayed: boolean): Generator<TurnEvent> {
  if ('error' in chunk) throw errorFromResponse(chunk.error.code, { error: chunk.error.message });
  if (!turn.head) {
    turn.head = chunk;
    yield { type: 'start', id: chunk.id, model: chunk.model, created: chunk.created, entityId: id, replayed };
  }
  const reason = chunk.choices[0]?.finish_reason;
  if (reason) turn.finish = reason;
  const content = chunk.choices[0]?.delta?.content;
  if (content) {
    turn.text += content;
    yield { type: 'delta', text: content };
  }
  if (chunk.usage) turn.usage = chunk.usage;
  if (chunk.recalled) turn.recalled = chunk.recalled;
  if (chunk.rotation) yield { type: 'rotation', ...chunk.rotation };
}

function completionOf(turn: StreamedTurn, id: string): EntityCompletion {
  const head = turn.head;
  if (!head) throw new ProviderError('the stream ended without a reply');
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [{ index: 0, message: { role: 'assistant', content: turn.text }, finish_reason: turn.finish }],
    usage: turn.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    entity_id: id,
    ...(turn.recalled ? { recalled: turn.recalled } : {}),
  };
}

export function brokenStream(cause?: unknown): ProviderError {
  const why = cause instanceof Error ? ` (${cause.message})` : '';
  return new ProviderError(`the stream ended before [DONE]${why}: the turn did not complete`, {
    cause,
    hint: 'retry with the same --idempotency-key; nothing was stored',
  });
}
