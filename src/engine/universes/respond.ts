import { CancelledError, TURN_CANCELLED } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import { type GenerationResponse, LOCAL_USER_ID, type RespondInput } from '../../core/wire/universe-types.js';
import type { ChatModel, Sampling } from '../../providers/spec.js';
import type { RequestRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { storedFor } from '../generation/idempotency.js';
import { type Generation, routeOf, runGeneration } from '../generation/model-call.js';
import { withLease } from '../support/lease.js';
import { logRow } from '../platform/logs.js';
import { reserveReply } from '../platform/rate-limits.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import { parseRespond } from '../../core/wire/universe-input.js';
import { complete, requestSummary } from './respond-settle.js';
import { takeToolResults, takeUserInput } from './take-input.js';
import { replyRow, toolCallsOut } from './tool-calls.js';
import { type BuiltPrompt, buildPrompt, promptTokens } from './universe-prompt.js';
import { type HeldContext, type Turn, leaseLost, openTurn, universeLease } from './universe-turn.js';
import type { UniverseService } from './universes.js';

/**
 * POST /responses: one assistant turn in stored, inline or standalone mode (docs/design.md#requestid,
 * docs/design.md#universes). In stored mode the user message is stored at once (with a requestId's `pending`
 * record), tool results only when new for the pending turn, and the reply, its log record and the
 * request's outcome together in the turn's last write, which frees the lease: a crash leaves
 * either no reply, or the reply with its record, and a retry with the requestId answers once.
 */
export async function respond(
  deps: EngineDeps,
  universes: UniverseService,
  request: RespondInput,
  opts: RespondOptions & { onDelta?: (text: string) => void } = {},
): Promise<GenerationResponse> {
  const turn = respondEvents(deps, universes, request, opts);
  try {
    for (;;) {
      const next = await turn.next();
      if (next.done) return next.value;
      opts.onDelta?.(next.value.text);
    }
  } finally {
    await turn.return(undefined as never);
  }
}

/** Who asks for a turn, and what may end or bound it. */
export interface RespondOptions {
  userId?: string;
  signal?: AbortSignal;
  /** The request's share of its key's tokens per minute: the prompt and the reply's bound are reserved before the model is called. */
  allowance?: TokenAllowance;
}

/** The reply's text as it is generated. */
export interface ResponseDelta {
  type: 'delta';
  text: string;
}

/**
 * The same turn as events: the reply's text as it comes, then the response. A consumer that stops
 * reading cancels the provider call, and the turn stores nothing more.
 */
export async function* respondEvents(
  deps: EngineDeps,
  universes: UniverseService,
  request: RespondInput,
  opts: RespondOptions = {},
): AsyncGenerator<ResponseDelta, GenerationResponse> {
  const userId = opts.userId ?? LOCAL_USER_ID;
  const t0 = deps.clock.now();
  // Parsed at the edge already; checked again for an embedder whose input did not come through one.
  const input = parseRespond(request);
  const stages = { auth: deps.clock.now() - t0, load: 0, truncate: 0, promptBuild: 0, provider: 0 };
  const first = await requestRecord(deps, userId, input);
  if (first?.status === 'done' && first.response) return replayed(JSON.parse(first.response) as GenerationResponse);
  const ctx = { userId, signal: opts.signal, allowance: opts.allowance, t0, stages, requestRow: first };
  if (input.universe === undefined) return yield* respondHeld(deps, universes, input, ctx);
  // One writer per universe, like an entity: messages are numbered from what this turn read.
  const universeId = (await universes.owned(input.universe, userId)).id;
  return yield* withLease(deps, universeLease(deps, universeId), opts.signal, async function* (lease, signal) {
    // Read again under the lease: a turn that ended between the first read and the lease is replayed, not answered twice.
    const requestRow = await requestRecord(deps, userId, input);
    if (requestRow?.status === 'done' && requestRow.response) return replayed(JSON.parse(requestRow.response) as GenerationResponse);
    return yield* respondHeld(deps, universes, input, { ...ctx, signal, requestRow, lease });
  });
}

function requestRecord(deps: EngineDeps, userId: string, input: RespondInput): Promise<RequestRow | undefined> {
  return input.requestId ? storedFor(deps.store, { kind: 'universe-user', userId }, input.requestId) : Promise.resolve(undefined);
}

/** The turn, once the universe (if any) is leased: every check comes before anything is stored. */
async function* respondHeld(deps: EngineDeps, universes: UniverseService, input: RespondInput, ctx: HeldContext): AsyncGenerator<ResponseDelta, GenerationResponse> {
  const turn = await openTurn(deps, universes, input, ctx);
  const sampling = await reserveTurn(turn);
  const early = input.toolResults?.length ? await takeToolResults(turn, input.toolResults) : await takeUserInput(turn);
  if (early) return early;
  let tStage = deps.clock.now();
  const built = buildPrompt(input, turn.loaded, turn.messages);
  ctx.stages.promptBuild = deps.clock.now() - tStage;
  tStage = deps.clock.now();
  const { model, reply } = yield* generate(turn, built, sampling);
  ctx.stages.provider = deps.clock.now() - tStage;
  const row = replyRow(turn, reply);
  return complete(turn, [row], turn.messages, row, { called: true, model, usage: reply.usage, prompt: built, toolCalls: toolCallsOut(reply), finishReason: reply.finish });
}

/**
 * Reserves what the turn may bill under the key's tokens per minute (see TokenAllowance), before
 * anything is stored, so a refusal (429) leaves no trace: the prompt as the window now builds it,
 * with the new input, and the reply's bound.
 */
async function reserveTurn(turn: Turn): Promise<Sampling | undefined> {
  const { input, ctx } = turn;
  if (!ctx.allowance) return undefined;
  const tok = await loadTokenEstimator();
  const added = tok.count(input.userInput ?? '') + tok.count(input.toolResults ? JSON.stringify(input.toolResults) : '');
  return reserveReply(ctx.allowance, (await promptTokens(buildPrompt(input, turn.loaded, turn.messages))) + added, undefined);
}

/** Calls the provider; a failure is logged (and a requestId marked failed) in the turn's last write, then thrown. */
async function* generate(turn: Turn, built: BuiltPrompt, sampling: Sampling | undefined): AsyncGenerator<ResponseDelta, { model: ChatModel; reply: Generation }> {
  const { deps, input, ctx } = turn;
  let model: ChatModel | undefined;
  const tStage = deps.clock.now();
  try {
    const routed = (model = await deps.chatModel(input.model, input.modelOverride));
    const request = { messages: built.messages, sampling, tools: input.tools, toolChoice: input.toolChoice, responseFormat: built.responseFormat, signal: ctx.signal };
    const call = runGeneration(routeOf(deps, routed), request);
    let next;
    while (!(next = await call.next()).done) yield { type: 'delta', text: next.value };
    if (ctx.signal?.aborted) throw new CancelledError(TURN_CANCELLED);
    const reply = next.value;
    ctx.firstTokenAt = reply.timings.firstTokenAt;
    for (const c of reply.toolCalls) c.callId ||= `call_${deps.newId()}`;
    return { model: routed, reply };
  } catch (err) {
    ctx.stages.provider = deps.clock.now() - tStage;
    throw await failed(turn, model, err);
  }
}

/** Records a failed generation; the error the caller sees (the lease's loss when that is why it failed). */
async function failed(turn: Turn, model: ChatModel | undefined, err: unknown): Promise<unknown> {
  const { deps, input, ctx } = turn;
  const log = logRow(deps, {
    kind: 'text', userId: ctx.userId, gameId: input.gameId ?? null, universeId: turn.universeId, requestId: input.requestId ?? null,
    model: input.model, providerModel: model?.modelId ?? null, status: 'error', error: err instanceof Error ? err.message : String(err),
    inputTokens: 0, outputTokens: 0, costUsd: 0, totalMs: deps.clock.now() - ctx.t0, providerMs: ctx.stages.provider,
    request: requestSummary(input, turn.loaded.mode), response: {},
  });
  if (ctx.lease?.lost.aborted) return leaseLost(turn.universeId!);
  // The failure is what the caller must see, not a failure to record it.
  await turn.write([], { request: turn.request('failed'), end: { log } }).catch(() => undefined);
  return err;
}

/** A completed request's stored response, marked as returned again. */
function replayed(response: GenerationResponse): GenerationResponse {
  return { ...response, diagnostics: { ...response.diagnostics, replayed: true } };
}

/** The tokens a response billed (a key's tokens per minute count them): none when it was returned again. */
export function billedTokens(res: GenerationResponse): number {
  return res.diagnostics.replayed ? 0 : res.usageSettlement.inputTokens + res.usageSettlement.outputTokens;
}
