import { shapeMessages } from '../../core/request-shape.js';
import { CancelledError, ContextOverflowError, ProviderError } from '../../core/errors.js';
import type { ChatModel, ChatRequest } from '../../providers/spec.js';
import type { Clock } from '../support/clock.js';
import { type EngineEvents, providerErrorClass } from '../events.js';
import { type Reply, absorb, emptyReply } from './reply.js';

/**
 * The one model call every feature makes (entity turns and their recall rounds, universe turns,
 * stateless completions, rotation summaries, context probes): the provider's stream is read here
 * and nowhere else. See docs/model-call.md.
 */

/** A model as a feature calls it: the routed (and shared-context gated) model, and who hears about its calls. */
export interface Route {
  model: ChatModel;
  events: EngineEvents;
  clock: Clock;
}

/** The route for `model` under the engine's observer and clock. */
export function routeOf(deps: { events: EngineEvents; clock: Clock }, model: ChatModel): Route {
  return { model, events: deps.events, clock: deps.clock };
}

/** When a call started, when its first text came (if any did) and when it ended, on the route's clock (ms). */
export interface GenerationTimings {
  startedAt: number;
  firstTokenAt?: number;
  endedAt: number;
}

/** A finished call: the reply (text, tool calls, usage with cached tokens, finish) and its timings. */
export interface Generation extends Reply {
  timings: GenerationTimings;
}

/** An empty generation for a caller that reads the reply as it fills (GenerationOptions.into). */
export function newGeneration(): Generation {
  return { ...emptyReply(), timings: { startedAt: 0, endedAt: 0 } };
}

export interface GenerationOptions {
  /**
   * The reply to add to: a call that continues a reply (see `continues`) or answers after a tool
   * round adds to what the caller already holds; on a failure it holds what came before it.
   */
  into?: Reply;
  /** The request ends with this assistant text for the server to go on from; its echo of it is dropped. */
  continues?: string;
  /** A refused prompt is the answer the call asks for (a context probe): not counted as a provider error. */
  probe?: boolean;
}

/**
 * Calls the model and yields the reply's text as it comes; returns the whole reply. A provider
 * failure is counted by class (the engine's events) and thrown. Reading stops when the request's
 * signal aborts: the caller decides whether that is a cancel or a stop that keeps the text.
 */
export async function* runGeneration(route: Route, request: ChatRequest, opts: GenerationOptions = {}): AsyncGenerator<string, Generation> {
  const { clock } = route;
  const reply = opts.into ?? emptyReply();
  const prefill = opts.continues ? new Prefill(opts.continues) : undefined;
  const startedAt = clock.now();
  let firstTokenAt: number | undefined;
  try {
    // Every request leaves in the one shape the chat templates accept, whoever built it.
    for await (let part of route.model.stream({ ...request, messages: shapeMessages(request.messages) })) {
      if (request.signal?.aborted) break;
      if (prefill && part.type === 'text-delta') part = { type: 'text-delta', text: prefill.take(part.text) };
      const text = absorb(reply, part);
      if (!text) continue;
      firstTokenAt ??= clock.now();
      yield text;
    }
  } catch (err) {
    const expected = opts.probe && err instanceof ContextOverflowError;
    if (!expected && (err instanceof ProviderError || err instanceof ContextOverflowError)) route.events.providerError(providerErrorClass(err));
    throw err;
  }
  return Object.assign(reply, { timings: { startedAt, firstTokenAt, endedAt: clock.now() } });
}

/** The same call when nobody reads the text as it comes (summaries, probes); an aborted one is cancelled. */
export async function readGeneration(route: Route, request: ChatRequest, opts: GenerationOptions = {}): Promise<Generation> {
  const call = runGeneration(route, request, opts);
  for (;;) {
    const next = await call.next();
    if (!next.done) continue;
    if (request.signal?.aborted) throw new CancelledError();
    return next.value;
  }
}

/**
 * How often a refused prompt is tried again: once, as what the server said settles it; a context
 * shared with other requests may still run out while they run, so up to three times, each
 * learning a smaller share of it.
 */
export function overflowRetries(err: ContextOverflowError): number {
  return err.shared ? 3 : 1;
}

/** How long a call waits before it tries a shared context again, times the attempt (with jitter). */
export function sharedBackoffMs(attempt: number): number {
  return SHARED_BACKOFF_MS * (1 + attempt) * (0.5 + Math.random());
}

const SHARED_BACKOFF_MS = 300;

/** A generation that completed, as the engine's observer counts it: its kind, its time and first token, its prompt tokens. */
export interface Completed {
  kind: 'entity' | 'universe' | 'facade' | 'side';
  /** When the feature's work began (the clock's ms): the turn's time runs from here. */
  t0: number;
  firstTokenAt: number | undefined;
  promptTokens: number;
  cachedTokens: number | undefined;
}

/** Tells the observer a generation completed (after its commit: a failed or cancelled one is not counted here). */
export function reportCompleted(route: Pick<Route, 'events' | 'clock'>, c: Completed): void {
  const seconds = (at: number) => (at - c.t0) / 1000;
  route.events.turn(c.kind, seconds(route.clock.now()), c.firstTokenAt === undefined ? undefined : seconds(c.firstTokenAt));
  route.events.promptTokens(c.promptTokens, c.cachedTokens);
}

/** The reply so far, sent as the prompt's last (assistant) message; the server's echo of it is dropped. */
class Prefill {
  private pending: string;
  constructor(text: string) {
    this.pending = text;
  }

  /** What of `delta` is new; a server that does not echo the text first did not continue it. */
  take(delta: string): string {
    if (!this.pending) return delta;
    const n = Math.min(this.pending.length, delta.length);
    if (delta.slice(0, n) !== this.pending.slice(0, n)) {
      throw new ProviderError('the shared context ran out mid-reply, and the server did not continue the reply from where it stopped', {
        hint: 'give each slot its own context (llama-server -np N -c N*CTX) or lower --concurrency',
      });
    }
    this.pending = this.pending.slice(n);
    return delta.slice(n);
  }
}
