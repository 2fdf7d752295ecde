import type { ChunkEvent } from '../../core/wire/completion-stream.js';
import { CancelledError, ConflictError, TURN_CANCELLED, isAbortError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ChatMessage, Sampling, ToolChoice, ToolDefinition } from '../../providers/spec.js';
import type { EngineDeps } from '../deps.js';
import { type CompletionHead, chatCompletion, settledUsage } from './completion.js';
import { storedAnswer } from './idempotency.js';
import { type Generation, newGeneration, reportCompleted, routeOf, runGeneration } from './model-call.js';
import { replayEvents } from './replay.js';
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
  /** The API key the request came with, recorded on its charge (none: the local backend's own use). */
  keyId?: string;
}

/** What a stateless completion reads of the engine's shared parts. */
export type StatelessDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId' | 'prices' | 'chatModel' | 'events'>;

type Completion = Extract<ChunkEvent, { type: 'done' }>['completion'];

/**
 * A stateless completion (the facade's platform ids and aliases): nothing is remembered, but it
 * is counted, billed to the account (input and output at the model's price) and logged like any
 * generation, in one transaction after the reply is complete. A metered account with nothing
 * left gets a 402 before the provider is called.
 */
export async function* completeStateless(deps: StatelessDeps, input: StatelessInput): AsyncGenerator<ChunkEvent> {
  const requestSha = input.key === undefined ? '' : sha256(JSON.stringify([input.model, input.messages, input.tools ?? null]));
  const stored = await storedAnswer<Completion>(deps.store, { kind: 'account', accountId: input.accountId }, input.key, requestSha);
  if (stored) return yield* replay(stored);
  const t0 = deps.clock.now();
  const tok = await loadTokenEstimator();
  const promptTokens = input.messages.reduce((n, m) => n + tok.count(messageText(m)), 0);
  await checkBalance(deps, input, promptTokens);
  const sampling = await reserveReply(input.allowance, promptTokens, input.sampling);
  const model = await deps.chatModel(input.model);
  const head = { id: `chatcmpl-${deps.newId()}`, model: input.shownModel ?? input.model, created: Math.floor(t0 / 1000) };
  const out = newGeneration();
  let started = false;
  try {
    const request = { messages: input.messages, sampling, tools: input.tools, toolChoice: input.toolChoice, purpose: 'reply' as const, buffered: input.streamed === false, signal: input.signal };
    for await (const text of runGeneration(routeOf(deps, model), request, { into: out })) {
      if (!started) yield { type: 'start', ...head };
      started = true;
      yield { type: 'delta', text };
    }
    if (input.signal?.aborted) throw new CancelledError(TURN_CANCELLED);
  } catch (err) {
    // The failure is what the caller must see, not a failure to log it.
    await writeLog(deps, logEntry(deps, input, model.modelId, t0, { status: 'error', error: err instanceof Error ? err.message : String(err) })).catch(() => undefined);
    if (isAbortError(err)) throw new CancelledError(TURN_CANCELLED);
    throw err;
  }
  const done = await commitCompletion(deps, input, { providerModel: model.modelId, t0, head, out, promptTokens, requestSha });
  if (!started) yield { type: 'start', ...head };
  yield { type: 'done', ...done };
}

/** What a finished completion commits: the reply, counted, and what names it. */
interface Finished {
  providerModel: string;
  t0: number;
  head: CompletionHead;
  out: Generation;
  promptTokens: number;
  requestSha: string;
}

/** Bills, logs and keys the completion in one transaction, then tells the observer; the completion and what it billed. */
async function commitCompletion(deps: StatelessDeps, input: StatelessInput, f: Finished): Promise<{ completion: Completion; billed: number }> {
  const { clock } = deps;
  const { out, t0 } = f;
  const tok = await loadTokenEstimator();
  const usage = settledUsage(out.usage, { input: f.promptTokens, output: tok.count(out.text) });
  const { inputTokens, outputTokens, cachedTokens } = usage;
  const cost = costUsd(deps.prices[input.model], inputTokens, outputTokens);
  const completion = chatCompletion(f.head, out, usage);
  const key = input.key === undefined ? undefined : { key: input.key, row: { contentSha256: f.requestSha, completion: JSON.stringify(completion) }, createdAt: clock.iso() };
  const written = await deps.store.accounts.chargeWithLog(
    { accountId: input.accountId, entityId: null, keyId: input.keyId ?? null, model: input.model, inputTokens, outputTokens, costUsd: cost, createdAt: clock.iso() },
    logRow(deps, logEntry(deps, input, f.providerModel, t0, { status: 'ok', error: null, inputTokens, outputTokens, cachedTokens, costUsd: cost, chars: out.text.length })),
    key,
  );
  if (!written) throw answeredMeanwhile(input.key!);
  reportCompleted(deps, { kind: input.mode === 'side' ? 'side' : 'facade', t0, firstTokenAt: out.timings.firstTokenAt, promptTokens: inputTokens, cachedTokens });
  return { completion, billed: inputTokens + outputTokens };
}

function replay(c: Completion): Generator<ChunkEvent> {
  return replayEvents({ type: 'start', id: c.id, model: c.model, created: c.created, replayed: true } as const, c, { type: 'done', completion: c } as const);
}

/** Two requests with one key at once: the first stored is the answer; this one is not billed. */
function answeredMeanwhile(key: string): ConflictError {
  return new ConflictError(`a request with idempotency key ${JSON.stringify(key)} was answered meanwhile; this one was not billed`, {
    hint: 'retry with the same key to get the stored reply',
  });
}

function logEntry(
  deps: StatelessDeps,
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
async function checkBalance(deps: StatelessDeps, input: StatelessInput, promptTokens: number): Promise<void> {
  const account = await deps.store.accounts.get(input.accountId);
  if (isMetered(account)) requireFunds(account, costUsd(deps.prices[input.model], promptTokens, 0), 'this request');
}
