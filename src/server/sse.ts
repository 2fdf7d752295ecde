/**
 * The one SSE writer, for the entity route and the OpenAI facade alike. Under node-server it
 * writes frames to node's ServerResponse itself instead of going through Hono's streaming helpers
 * (hono/streaming `stream()` / `streamSSE()`): those hand node-server a web ReadableStream that it
 * pumps through a reader into the response, and that costs the server 2.3 to 2.7 times the CPU of
 * a streamed reply (`npm run bench -- --only=sse-writer`: 16 frames, 211 µs written here against
 * 491 µs through `stream()` and 420 µs through `streamSSE()`; 200 frames, 722 against 1,960 and
 * 2,237). docs/design-server.md has the decision. Called in-process (`app.request`, other
 * runtimes), where there is no node response, the same frames go out as a web stream.
 */
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { type ChunkEvent, CompletionChunker, SSE_DONE, sseFrame, streamErrorFrame } from '../core/wire/completion-stream.js';
import type { CompletionChunk } from '../core/wire/entity-types.js';
import { MgptError } from '../core/errors.js';
import type { Env } from './env.js';

/** Which chunks go out (the facade drops the usage chunk unless asked for it). */
export type KeepChunk = (ch: CompletionChunk) => boolean;

const enc = new TextEncoder();
const keepAll: KeepChunk = () => true;

/**
 * A reply's events as the seed's server-sent events (docs/design.md#the-reply-stream), for the
 * entity route and the OpenAI facade alike: chunks, then [DONE]; a failure after the headers becomes an error frame and the
 * stream ends without [DONE] (the turn left no trace). `events` should be primed (its first event
 * already awaited) so an early failure still gets its real status. Under node-server the frames
 * are written to the socket directly: a web ReadableStream costs more per turn than the turn's SQL.
 */
export function sseReply(c: Context<Env>, events: AsyncGenerator<ChunkEvent>, headers: Record<string, string>, keep = keepAll): Promise<Response> {
  const chunker = new CompletionChunker();
  return sseEvents(c, events, headers, { frames: (ev) => framesOf(chunker, ev, keep), end: SSE_DONE, error: errorFrame });
}

/** How one contract's events become frames: each event's frames (possibly none), the last frame, and a failure's frame. */
export interface SseFramer<E> {
  frames(ev: E): string;
  end: string;
  error(err: unknown): string;
}

/** Any contract's events as server-sent events, written as sseReply writes them (the Responses facade's events too). */
export async function sseEvents<E>(c: Context<Env>, events: AsyncGenerator<E>, headers: Record<string, string>, framer: SseFramer<E>): Promise<Response> {
  const all = { ...c.get('rateHeaders'), ...headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' };
  const out = c.env?.outgoing as ServerResponse | undefined;
  if (!out) return c.body(readable(events, framer), 200, all);
  out.writeHead(200, { ...all, 'X-Request-Id': c.get('requestId') });
  await pump(events, framer, out);
  // Tells node-server the answer is already written.
  return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
}

/** The frames one event makes, as one string (possibly empty). */
function framesOf(chunker: CompletionChunker, ev: ChunkEvent, keep: KeepChunk): string {
  let s = '';
  for (const ch of chunker.push(ev)) if (keep(ch)) s += sseFrame(ch);
  return s;
}

function errorFrame(err: unknown): string {
  const status = err instanceof MgptError ? err.status : 500;
  return sseFrame(streamErrorFrame(err instanceof MgptError ? err.message : 'internal error', status));
}

/**
 * Writes every event's frames to node's response, waiting when the socket's buffer is full. When
 * the client leaves, the events are still read to their end, unwritten: the request's signal has
 * aborted, so a turn ends as that signal says (cancelled without a trace, or, for a facade client
 * that stopped a stream, stored as far as it went) rather than being cut off mid-step.
 */
async function pump<E>(events: AsyncGenerator<E>, framer: SseFramer<E>, out: ServerResponse): Promise<void> {
  try {
    for await (const ev of events) {
      if (out.destroyed) continue;
      const s = framer.frames(ev);
      if (s && !out.write(s)) await drained(out);
    }
    if (!out.destroyed) out.end(framer.end);
  } catch (err) {
    if (!out.destroyed) out.end(framer.error(err));
  }
}

function drained(out: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

/** The same as a web stream, where there is no node response (app.request in tests, other runtimes). */
function readable<E>(events: AsyncGenerator<E>, framer: SseFramer<E>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // An event with no frame (start, rotation) must not end the pull: the stream would stall.
        for (;;) {
          const r = await events.next();
          if (r.done) {
            if (framer.end) controller.enqueue(enc.encode(framer.end));
            controller.close();
            return;
          }
          const s = framer.frames(r.value);
          if (s) return controller.enqueue(enc.encode(s));
        }
      } catch (err) {
        controller.enqueue(enc.encode(framer.error(err)));
        controller.close();
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}
