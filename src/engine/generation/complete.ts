import type { ChunkEvent } from '../../core/completion-stream.js';
import { IDEMPOTENCY_KEY_MAX } from '../../core/entity-types.js';
import { BadRequestError, CancelledError, ConflictError, ContextOverflowError, ProviderError, TURN_CANCELLED, isAbortError } from '../../core/errors.js';
import { providerErrorClass } from '../events.js';
import { sha256 } from '../../core/hash.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/tokens.js';
import type { ChatMessage, Sampling, ToolChoice, ToolDefinition } from '../../providers/spec.js';
import type { EngineDeps } from '../deps.js';
import { absorb, emptyReply, replyMessage } from './reply.js';
import { messageText } from './calibration.js';
import { isMetered, requireFunds } from '../platform/billing.js';
import { reserveReply } from '../platform/rate-limits.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import { type LogEntry, cachedOf, logRow, writeLog } from '../platform/logs.js';

export interface StatelessInput {
  /** A platform id or text alias: the model that answers, priced and logged. */
  model: string;
  /** The model the completion names, when not `model` (an `entity:` model's side request). */
  shownModel?: string;
  messages: ChatMessage[];
  sampling?: Sampling;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** What the log calls the request: a plain stateless completion, or what the facade made of a request to an entity. */
  mode?: 'stateless' | 'side' | 'regenerated' | 'unstored';
  /** The entity whose voice answered (side requests, regenerates). */
  entityId?: string;
  accountId: string;
  /** The acting user: owns the generation log. */
  userId: string;
  /** Idempotency-Key: a retry replays the stored reply, billed and logged once (per account). */
  key?: string;
  signal?: AbortSignal;
  /** The caller watches the reply arrive; false: the provider may answer in one piece. */
  streamed?: boolean;
  /** The request's share of its key's tokens per minute: the prompt and the reply's bound are reserved before the model is called. */
  allowance?: TokenAllowance;
}

type Completion = Extract<ChunkEvent, { type: 'done' }>['completion'];

/**
 * A stateless completion (the facade's platform ids and aliases): nothing is remembered, but it
 * is counted, billed to the account (input and output at the model's price) and logged like any
 * generation, in one transaction after the reply is complete. A metered account with nothing
 * left gets a 402 before the provider is called.
 */
export async function* completeStateless(deps: EngineDeps, input: StatelessInput): AsyncGenerator<ChunkEvent> {
  const requestSha = input.key === undefined ? '' : sha256(JSON.stringify([input.model, input.messages, input.tools ?? null]));
  const stored = await storedReply(deps, input, requestSha);
  if (stored) return yield* replay(stored);
  const { clock } = deps;
  const t0 = clock.now();
  const tok = await loadTokenEstimator();
  const promptTokens = input.messages.reduce((n, m) => n + tok.count(messageText(m)), 0);
  await checkBalance(deps, input, promptTokens);
  const sampling = await reserveReply(input.allowance, promptTokens, input.sampling);
  const model = await deps.chatModel(input.model);
  const id = `chatcmpl-${deps.newId()}`;
  const created = Math.floor(clock.now() / 1000);
  const shown = input.shownModel ?? input.model;
  let started = false;
  let firstTokenAt: number | undefined;
  const out = emptyReply();
  try {
    const request = { messages: input.messages, sampling, tools: input.tools, toolChoice: input.toolChoice, purpose: 'reply' as const, buffered: input.streamed === false, signal: input.signal };
    for await (const part of model.stream(request)) {
      const text = absorb(out, part);
      if (!text) continue;
      if (!started) yield { type: 'start', id, model: shown, created };
      started = true;
      firstTokenAt ??= clock.now();
      yield { type: 'delta', text };
    }
    if (input.signal?.aborted) throw new CancelledError(TURN_CANCELLED);
  } catch (err) {
    if (err instanceof ProviderError || err instanceof ContextOverflowError) deps.events.providerError(providerErrorClass(err));
    // The failure is what the caller must see, not a failure to log it.
    await writeLog(deps, logEntry(deps, input, model.modelId, t0, { status: 'error', error: err instanceof Error ? err.message : String(err) })).catch(() => undefined);
    if (isAbortError(err)) throw new CancelledError(TURN_CANCELLED);
    throw err;
  }
  const inputTokens = out.usage?.inputTokens ?? promptTokens;
  const outputTokens = out.usage?.outputTokens ?? tok.count(out.text);
  const cost = costUsd(deps.prices[input.model], inputTokens, outputTokens);
  const completion: Completion = {
    id, object: 'chat.completion', created, model: shown,
    choices: [{ index: 0, message: replyMessage(out), finish_reason: out.finish }],
    usage: {
      prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens,
      ...(out.usage?.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: out.usage.cachedTokens } } : {}),
    },
  };
  const key = input.key === undefined ? undefined : { key: input.key, row: { contentSha256: requestSha, completion: JSON.stringify(completion) }, createdAt: clock.iso() };
  const written = await deps.store.accounts.chargeWithLog(
    { accountId: input.accountId, entityId: null, model: input.model, inputTokens, outputTokens, costUsd: cost, createdAt: clock.iso() },
    logRow(deps, logEntry(deps, input, model.modelId, t0, { status: 'ok', error: null, inputTokens, outputTokens, cachedTokens: out.usage?.cachedTokens, costUsd: cost, chars: out.text.length })),
    key,
  );
  if (!written) throw answeredMeanwhile(input.key!);
  const seconds = (at: number) => (at - t0) / 1000;
  deps.events.turn(input.mode === 'side' ? 'side' : 'facade', seconds(clock.now()), firstTokenAt === undefined ? undefined : seconds(firstTokenAt));
  deps.events.promptTokens(inputTokens, out.usage?.cachedTokens);
  if (!started) yield { type: 'start', id, model: shown, created };
  yield { type: 'done', completion, billed: inputTokens + outputTokens };
}

/** The reply stored for this request's Idempotency-Key; a key used with another request is refused. */
async function storedReply(deps: EngineDeps, input: StatelessInput, requestSha: string): Promise<Completion | undefined> {
  if (input.key === undefined) return undefined;
  checkKey(input.key);
  const row = await deps.store.idempotency.completion(input.accountId, input.key);
  if (!row) return undefined;
  if (row.contentSha256 !== requestSha) {
    throw new BadRequestError(`idempotency key ${JSON.stringify(input.key)} was already used with a different request`, {
      hint: 'use a new key for a new request',
    });
  }
  return JSON.parse(row.completion) as Completion;
}

function* replay(c: Completion): Generator<ChunkEvent> {
  yield { type: 'start', id: c.id, model: c.model, created: c.created, replayed: true };
  const text = c.choices[0]?.message.content ?? '';
  if (text) yield { type: 'delta', text };
  yield { type: 'done', completion: c };
}

function checkKey(key: string): void {
  if (key.length === 0) throw new BadRequestError('idempotency key must be a non-empty string');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw new BadRequestError(`idempotency key is ${key.length} characters; the limit is ${IDEMPOTENCY_KEY_MAX}`);
}

/** Two requests with one key at once: the first stored is the answer; this one is not billed. */
function answeredMeanwhile(key: string): ConflictError {
  return new ConflictError(`a request with idempotency key ${JSON.stringify(key)} was answered meanwhile; this one was not billed`, {
    hint: 'retry with the same key to get the stored reply',
  });
}

function logEntry(
  deps: EngineDeps,
  input: StatelessInput,
  providerModel: string,
  t0: number,
  r: { status: string; error: string | null; inputTokens?: number; outputTokens?: number; cachedTokens?: number; costUsd?: number; chars?: number },
): LogEntry {
  return {
    kind: 'text', userId: input.userId, gameId: null, universeId: null, requestId: null, model: input.shownModel ?? input.model, providerModel,
    status: r.status, error: r.error, inputTokens: r.inputTokens ?? 0, outputTokens: r.outputTokens ?? 0, costUsd: r.costUsd ?? 0,
    totalMs: deps.clock.now() - t0, providerMs: deps.clock.now() - t0,
    request: { facade: input.mode ?? 'stateless', messages: input.messages.length, ...(input.entityId ? { entityId: input.entityId } : {}) },
    response: { chars: r.chars ?? 0, ...cachedOf(r.cachedTokens) },
  };
}

/** A metered account must cover the prompt, as an entity turn must cover its message. */
async function checkBalance(deps: EngineDeps, input: StatelessInput, promptTokens: number): Promise<void> {
  const account = await deps.store.accounts.get(input.accountId);
  if (isMetered(account)) requireFunds(account, costUsd(deps.prices[input.model], promptTokens, 0), 'this request');
}
