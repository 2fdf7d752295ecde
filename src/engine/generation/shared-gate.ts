import { CancelledError, ContextOverflowError } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ChatModel, ChatRequest, StreamPart } from '../../providers/spec.js';
import { CONTEXT_MARGIN, PER_MESSAGE_TOKENS, PER_PROMPT_TOKENS, type RouteCalibration, SHARED_REPLY_CAP, messageText } from './calibration.js';
import { ReplySizes } from './reply-sizes.js';

/**
 * Requests to a model whose context is shared by parallel requests (llama-server's default
 * slots) take turns by tokens: each holds its prompt and room for its reply from the shared
 * context while it runs, so requests that together fit run side by side and the rest wait, first
 * come first served. Without a known size, they run one at a time. Every call on the route goes
 * through it: turns, summaries, probes, completions and universe turns.
 *
 * The room held for a reply is its bound until the route has seen enough replies, then what
 * nearly all of them used (ReplySizes). A reply may still run to its bound: if that outgrows what
 * the others left, the server says the shared context ran out, and the turn goes on where it
 * stopped (turn.ts, continuation()); the gate counts that reply as one that used its whole bound,
 * so reservations grow back while replies outgrow them.
 */
export class SharedContextGates {
  private readonly gates = new Map<string, TokenGate>();
  private readonly replies = new Map<string, ReplySizes>();

  constructor(private readonly calibration: Pick<RouteCalibration, 'knownUnshared' | 'sharedContext'>) {}

  /** The model, its requests gated while its route's context is known to be shared. */
  wrap(model: ChatModel): ChatModel {
    const gated: ChatModel = {
      provider: model.provider,
      modelId: model.modelId,
      routeKey: model.routeKey,
      limits: model.limits,
      // The common case (a route known not to share its context) streams with no layer between.
      stream: (request) => (this.calibration.knownUnshared(model) ? model.stream(request) : this.stream(model, request)),
    };
    if (model.generateImage) gated.generateImage = (request) => model.generateImage!(request);
    if (model.toolSupport) gated.toolSupport = () => model.toolSupport!();
    if (model.serverContext) gated.serverContext = (signal) => model.serverContext!(signal);
    return gated;
  }

  private async *stream(model: ChatModel, request: ChatRequest): AsyncGenerator<StreamPart> {
    const shared = await this.calibration.sharedContext(model);
    if (!shared) return yield* model.stream(request);
    const capacity = shared.contextTokens === undefined ? 1 : Math.floor(shared.contextTokens * CONTEXT_MARGIN);
    const gate = this.gate(model.routeKey, capacity);
    const bound = replyBound(request);
    const sizes = this.sizes(model.routeKey, request);
    // A cut reply going on is larger than the share its turn was planned for, and a request the
    // shared context ran out on may meet the same requests again: either runs alone, when the
    // server clears the slots it left idle and the whole context is the request's.
    const alone = continues(request) || request.alone ? capacity : 0;
    const need = shared.contextTokens === undefined ? 1 : Math.max(alone, (await promptTokens(request, shared.factor)) + sizes.reserve(bound));
    const held = await gate.acquire(need, request.signal);
    const reply = new ReplyLength(shared.factor);
    try {
      for await (const part of model.stream(request)) {
        if (part.type === 'error') ranOut(part.error, sizes, bound);
        reply.see(part);
        yield part;
      }
      // A continuation's reply is only the rest of one: not a reply's length.
      if (!continues(request)) sizes.add(await reply.tokens());
    } catch (err) {
      ranOut(err, sizes, bound);
      throw err;
    } finally {
      gate.release(held);
    }
  }

  /** The lengths seen on the route for requests of this purpose (a summary's differ from a reply's). */
  private sizes(routeKey: string, request: ChatRequest): ReplySizes {
    const key = `${routeKey}\0${request.purpose ?? 'reply'}`;
    let sizes = this.replies.get(key);
    if (!sizes) this.replies.set(key, (sizes = new ReplySizes()));
    return sizes;
  }

  private gate(routeKey: string, capacity: number): TokenGate {
    let gate = this.gates.get(routeKey);
    if (!gate) this.gates.set(routeKey, (gate = new TokenGate(capacity)));
    gate.resize(capacity);
    return gate;
  }
}

/** A request's prompt in the model's tokens. */
async function promptTokens(request: ChatRequest, factor: number): Promise<number> {
  const tok = await loadTokenEstimator();
  let estimate = PER_PROMPT_TOKENS;
  for (const m of request.messages) estimate += PER_MESSAGE_TOKENS + tok.count(messageText(m));
  return Math.ceil(estimate * factor);
}

/** The longest reply a request asks for. */
function replyBound(request: ChatRequest): number {
  return request.maxTokens ?? request.sampling?.maxTokens ?? SHARED_REPLY_CAP;
}

/** A reply the shared context could not hold counts as one that used all its room. */
function ranOut(err: unknown, sizes: ReplySizes, bound: number): void {
  if (err instanceof ContextOverflowError && err.shared) sizes.add(bound);
}

/** A prompt ending with an assistant message: the server goes on from it (a reply cut and continued). */
function continues(request: ChatRequest): boolean {
  return request.messages.at(-1)?.role === 'assistant';
}

/** A reply's length: what the provider counted, else its text in the model's tokens (estimated). */
class ReplyLength {
  private counted: number | undefined;
  private text = '';
  constructor(private readonly factor: number) {}

  see(part: StreamPart): void {
    if (part.type === 'usage') this.counted = part.usage.outputTokens;
    else if (part.type === 'text-delta' && this.counted === undefined) this.text += part.text;
  }

  async tokens(): Promise<number> {
    if (this.counted !== undefined) return this.counted;
    return Math.ceil((await loadTokenEstimator()).count(this.text) * this.factor);
  }
}

interface Waiter {
  need: number;
  grant: () => void;
}

/** A first-come-first-served semaphore of tokens. A request larger than the whole runs alone. */
export class TokenGate {
  private used = 0;
  private readonly queue: Waiter[] = [];

  constructor(private capacity: number) {}

  /** Waits until `need` tokens are free (or the gate is empty) and takes them; returns what was taken. */
  acquire(need: number, signal?: AbortSignal): Promise<number> {
    const take = Math.max(1, Math.min(need, this.capacity));
    if (signal?.aborted) return Promise.reject(new CancelledError());
    if (!this.queue.length && this.fits(take)) {
      this.used += take;
      return Promise.resolve(take);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        need: take,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(take);
        },
      };
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new CancelledError());
        this.drain();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  release(taken: number): void {
    this.used -= taken;
    this.drain();
  }

  /** A learned size replaces the old one; what is held stays held. */
  resize(capacity: number): void {
    if (capacity === this.capacity) return;
    this.capacity = capacity;
    this.drain();
  }

  private fits(take: number): boolean {
    return this.used === 0 || this.used + take <= this.capacity;
  }

  private drain(): void {
    while (this.queue.length && this.fits(Math.min(this.queue[0]!.need, this.capacity))) {
      const next = this.queue.shift()!;
      this.used += next.need;
      next.grant();
    }
  }
}
