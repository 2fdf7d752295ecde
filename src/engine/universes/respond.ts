import { BadRequestError, ConflictError, ContextOverflowError, ProviderError } from '../../core/errors.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/tokens.js';
import { splitsToolGroup, universeWindow } from '../../core/universe-window.js';
import {
  type GenerationResponse,
  LOCAL_USER_ID,
  PREVIEW_CHARS,
  type RespondInput,
  type ToolCallOut,
  type ToolCallRef,
  toolResultContent,
} from '../../core/universe-types.js';
import type { ChatMessage, ChatModel, ProviderUsage, Sampling } from '../../providers/spec.js';
import type { LogRow, RequestRow, UniverseMessageRow, UniverseRow } from '../../store/types.js';
import type { FinishReason } from '../../core/entity-types.js';
import { type Reply, absorb, emptyReply } from '../generation/reply.js';
import type { EngineDeps } from '../deps.js';
import { providerErrorClass } from '../events.js';
import { sha256 } from '../../core/hash.js';
import { type HeldLease, type LeaseRequest, universeSubject, withLease } from '../lease.js';
import { type LogEntry, cachedOf, logRow } from '../platform/logs.js';
import { reserveReply } from '../platform/rate-limits.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import { parseRespond } from '../../core/universe-input.js';
import { toRuntime, type UniverseService } from './universes.js';

type Mode = 'stored' | 'inline' | 'standalone';

interface Loaded {
  mode: Mode;
  universe?: UniverseRow;
  prompt: { text: string; responseFormat?: Record<string, unknown>; additionalInstructions?: string } | null;
  messages: UniverseMessageRow[];
  source: 'cache' | 'database' | 'none';
  ageMs: number;
}

/**
 * POST /responses: one assistant turn in stored, inline or standalone mode (seed 000 section 4.2,
 * SPEC section 5). In stored mode the user message is stored at once (with a requestId's `pending`
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
  return input.requestId ? deps.store.universes.request(userId, input.requestId) : Promise.resolve(undefined);
}

interface HeldContext {
  userId: string;
  signal?: AbortSignal;
  allowance?: TokenAllowance;
  t0: number;
  stages: GenerationResponse['diagnostics']['serverStages'];
  requestRow: RequestRow | undefined;
  lease?: HeldLease;
  /** When the reply's first text arrived (the clock's ms), for the first-token metric. */
  firstTokenAt?: number;
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

/** A universe turn in progress: what it read, what it has stored so far, and how it stores more. */
class Turn {
  /** The conversation as this turn sees it (stored rows plus what it appended). */
  messages: UniverseMessageRow[];
  /** A statePointer's cut, stored with the turn's first write. */
  truncateTo: number | undefined;
  /** The user message this turn answers, once stored. */
  userSeq: number | null = null;

  constructor(
    readonly deps: EngineDeps,
    readonly input: RespondInput,
    readonly loaded: Loaded,
    readonly ctx: HeldContext,
  ) {
    this.messages = loaded.messages;
  }

  get universeId(): string | null {
    return this.loaded.universe?.id ?? null;
  }

  /** Stored mode writes; inline and standalone turns keep nothing but their log. */
  get stored(): boolean {
    return this.loaded.mode === 'stored' && this.ctx.lease !== undefined && this.universeId !== null;
  }

  newRow(r: Omit<UniverseMessageRow, 'seq' | 'createdAt'>, offset = 0): UniverseMessageRow {
    return { ...r, seq: this.messages.length + 1 + offset, createdAt: this.deps.clock.iso() };
  }

  /** The requestId record with this outcome, when the request has an id and the turn is stored. */
  request(status: RequestRow['status'], response: GenerationResponse | null = null): RequestRow | undefined {
    if (!this.input.requestId || !this.stored) return undefined;
    const userSeq = status === 'done' ? null : this.userSeq;
    return { userId: this.ctx.userId, requestId: this.input.requestId, universeId: this.universeId, status, userSeq, response: response && JSON.stringify(response) };
  }

  /**
   * Stores rows (and a pending truncation) in one unit of work under the lease; `end` makes it the
   * turn's last write, with its log record and request outcome, and frees the lease.
   */
  async write(rows: UniverseMessageRow[], extra: { request?: RequestRow; end?: { log: LogRow } } = {}): Promise<void> {
    this.messages = [...this.messages, ...rows];
    if (!this.stored) {
      if (extra.end) await this.deps.store.logs.insert(extra.end.log);
      return;
    }
    const { deps, universeId, truncateTo } = this;
    const last = extra.end !== undefined;
    if (rows.length === 0 && truncateTo === undefined && !last && !extra.request) return;
    const write = {
      universeId: universeId!, truncateTo, append: rows, touch: { messages: this.messages.length, updatedAt: deps.clock.iso() },
      release: last, log: extra.end?.log, request: extra.request,
    };
    await this.ctx.lease!.write((claim) => deps.store.universes.write({ ...write, lease: claim }), () => leaseLost(universeId!), last);
    this.truncateTo = undefined;
    if (last) deps.universeCache.set(universeId!, `${this.messages.length}:${write.touch.updatedAt}`, this.messages);
  }
}

/** Loads the conversation and applies a statePointer: nothing is stored yet. */
async function openTurn(deps: EngineDeps, universes: UniverseService, input: RespondInput, ctx: HeldContext): Promise<Turn> {
  let tStage = deps.clock.now();
  const loaded = await load(deps, universes, input, ctx.userId);
  ctx.stages.load = deps.clock.now() - tStage;
  checkStructured(input, loaded);
  const turn = new Turn(deps, input, loaded, ctx);
  // A retry after a failure or a crash whose user message was stored: continue from it, store nothing twice.
  const r = ctx.requestRow;
  const resumed =
    turn.stored && (r?.status === 'failed' || r?.status === 'pending') && r.universeId === turn.universeId &&
    r.userSeq !== null && r.userSeq === turn.messages.length && turn.messages[r.userSeq - 1]?.role === 'user' &&
    turn.messages[r.userSeq - 1]?.content === input.userInput;
  if (resumed) turn.userSeq = r!.userSeq;
  tStage = deps.clock.now();
  if (input.statePointer !== undefined && !resumed) applyStatePointer(turn, input.statePointer);
  ctx.stages.truncate = deps.clock.now() - tStage;
  return turn;
}

function applyStatePointer(turn: Turn, p: number): void {
  const messages = turn.messages;
  if (p > messages.length || splitsToolGroup(messages.map(toRuntime), p)) {
    const why = p > messages.length ? `is beyond the ${messages.length} stored messages` : 'falls inside a tool-call group';
    throw new BadRequestError(`statePointer ${p} ${why}`, { errors: [{ field: 'statePointer', message: why }] });
  }
  if (p === messages.length) return;
  // Dropped from the live transcript (stored with the turn's first write, after every check);
  // what was said stays in the generation logs.
  if (turn.stored) turn.truncateTo = p;
  turn.messages = messages.slice(0, p);
}

/** Stores the user message (unless a resumed turn already did), with the request's `pending` record. */
async function takeUserInput(turn: Turn): Promise<undefined> {
  const waiting = unansweredCalls(turn.messages);
  if (waiting.length) {
    const ids = waiting.map((c) => c.id).join(', ');
    throw new BadRequestError(`a turn is waiting for tool results (${ids}); send toolResults, or move statePointer back`, {
      errors: [{ field: 'toolResults', message: `required while calls ${ids} are pending` }],
    });
  }
  if (turn.userSeq !== null) return undefined;
  const row = turn.newRow({ role: 'user', content: turn.input.userInput, toolCalls: null, toolCallId: null, toolName: null, toolOk: null });
  turn.userSeq = row.seq;
  await turn.write([row], { request: turn.request('pending') });
  return undefined;
}

/**
 * Stores the results new for the pending calls. When some calls are still unanswered, or the
 * results were for a continuation that already completed, the turn ends here without the provider.
 */
async function takeToolResults(turn: Turn, results: NonNullable<RespondInput['toolResults']>): Promise<GenerationResponse | undefined> {
  const messages = turn.messages;
  const pending = pendingCalls(messages);
  if (pending.length === 0) {
    const replay = finishedToolTurn(messages, results.map((r) => r.callId));
    if (replay === null) {
      throw new BadRequestError('no turn is waiting for tool results', {
        errors: results.map((r, i) => ({ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` })),
      });
    }
    // A retry of a continuation that already completed: answer it again, store nothing new.
    return complete(turn, [], messages.slice(0, replay), messages[replay], { called: false });
  }
  const fresh = newResults(turn, pending, results);
  const waiting = unansweredCalls([...messages, ...fresh]);
  if (!waiting.length) {
    await turn.write(fresh);
    return undefined;
  }
  // Results for some calls only: the provider cannot continue until all are answered.
  const last = lastToolCallMessage(messages)!;
  return complete(turn, fresh, [...messages, ...fresh], last, { called: false, toolCalls: waiting });
}

/** Results are cumulative: those answered earlier (this round or a previous one) are skipped. */
function newResults(turn: Turn, pending: ToolCallRef[], results: NonNullable<RespondInput['toolResults']>): UniverseMessageRow[] {
  const messages = turn.messages;
  const known = new Set(pending.map((c) => c.id));
  const bad = results.flatMap((r, i) =>
    known.has(r.callId) || answered(messages, r.callId) ? [] : [{ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` }],
  );
  if (bad.length) throw new BadRequestError('tool results for calls that are not pending', { errors: bad });
  const fresh: UniverseMessageRow[] = [];
  for (const r of results) {
    if (!known.has(r.callId) || answered(messages, r.callId) || fresh.some((f) => f.toolCallId === r.callId)) continue;
    const row = { role: 'tool' as const, content: toolResultContent(r), toolCalls: null, toolCallId: r.callId, toolName: r.name, toolOk: r.ok ? 1 : 0 };
    fresh.push(turn.newRow(row, fresh.length));
  }
  return fresh;
}

/** Calls the provider; a failure is logged (and a requestId marked failed) in the turn's last write, then thrown. */
async function* generate(turn: Turn, built: BuiltPrompt, sampling: Sampling | undefined): AsyncGenerator<ResponseDelta, { model: ChatModel; reply: Reply }> {
  const { deps, input, ctx } = turn;
  let model: ChatModel | undefined;
  const tStage = deps.clock.now();
  try {
    model = await deps.chatModel(input.model, input.modelOverride);
    const reply = emptyReply();
    for await (const part of model.stream({ messages: built.messages, sampling, tools: input.tools, toolChoice: input.toolChoice, responseFormat: built.responseFormat, signal: ctx.signal })) {
      const text = absorb(reply, part);
      if (!text) continue;
      ctx.firstTokenAt ??= deps.clock.now();
      yield { type: 'delta', text };
    }
    for (const c of reply.toolCalls) c.callId ||= `call_${deps.newId()}`;
    return { model, reply };
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
  if (err instanceof ProviderError || err instanceof ContextOverflowError) deps.events.providerError(providerErrorClass(err));
  if (ctx.lease?.lost.aborted) return leaseLost(turn.universeId!);
  // The failure is what the caller must see, not a failure to record it.
  await turn.write([], { request: turn.request('failed'), end: { log } }).catch(() => undefined);
  return err;
}

function replyRow(turn: Turn, reply: Reply): UniverseMessageRow {
  if (!reply.toolCalls.length) {
    return turn.newRow({ role: 'assistant', content: reply.text, toolCalls: null, toolCallId: null, toolName: null, toolOk: null });
  }
  const refs: ToolCallRef[] = reply.toolCalls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return turn.newRow({ role: 'assistant', content: reply.text || null, toolCalls: JSON.stringify(refs), toolCallId: null, toolName: null, toolOk: null });
}

function toolCallsOut(reply: Reply): ToolCallOut[] | undefined {
  return reply.toolCalls.length ? reply.toolCalls.map((c) => ({ callId: c.callId, name: c.name, arguments: parseArguments(c.arguments) })) : undefined;
}

/** Settles the turn and writes it: `rows`, its log record and the request's outcome in one unit of work. */
async function complete(turn: Turn, rows: UniverseMessageRow[], before: UniverseMessageRow[], reply: UniverseMessageRow, o: SettleOptions): Promise<GenerationResponse> {
  const { response, log } = await settle(turn, before, reply, o);
  await turn.write(rows, { request: turn.request('done', response), end: { log } });
  if (o.called) {
    const { deps, ctx } = turn;
    const seconds = (at: number) => (at - ctx.t0) / 1000;
    deps.events.turn('universe', seconds(deps.clock.now()), ctx.firstTokenAt === undefined ? undefined : seconds(ctx.firstTokenAt));
    deps.events.promptTokens(log.inputTokens, o.usage?.cachedTokens);
  }
  return response;
}

async function load(deps: EngineDeps, universes: UniverseService, input: RespondInput, userId: string): Promise<Loaded> {
  if (input.universe !== undefined) {
    const universe = await universes.owned(input.universe, userId);
    const cached = deps.universeCache.get(universe.id, `${universe.messages}:${universe.updatedAt}`);
    const messages = cached?.value ?? (await deps.store.universes.messages(universe.id));
    return {
      mode: 'stored',
      universe,
      prompt: {
        text: universe.promptText,
        responseFormat: universe.responseFormat ? JSON.parse(universe.responseFormat) : undefined,
        additionalInstructions: universe.additionalInstructions ?? undefined,
      },
      messages,
      source: cached ? 'cache' : 'database',
      ageMs: cached ? deps.clock.now() - cached.storedAt : 0,
    };
  }
  if (input.universeDoc !== undefined) {
    const doc = input.universeDoc;
    const p = doc.prompt;
    const prompt = p?.text !== undefined ? { text: p.text } : p?.storedPrompt !== undefined ? await deps.prompts.get(p.storedPrompt) : null;
    const now = deps.clock.iso();
    const messages: UniverseMessageRow[] = doc.runtime.conversation.map((m, i) => ({
      seq: i + 1,
      role: m.role,
      content: m.content,
      toolCalls: m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls) : null,
      toolCallId: m.role === 'tool' ? m.tool_call_id : null,
      toolName: m.role === 'tool' ? (m.name ?? null) : null,
      toolOk: null,
      createdAt: now,
    }));
    return { mode: 'inline', prompt, messages, source: 'none', ageMs: 0 };
  }
  return { mode: 'standalone', prompt: null, messages: [], source: 'none', ageMs: 0 };
}

/** useStructuredOutput needs an output contract in the prompt snapshot. */
function checkStructured(input: RespondInput, loaded: Loaded): void {
  if (input.responseFormat !== undefined || !input.useStructuredOutput || loaded.prompt?.responseFormat) return;
  throw new BadRequestError('useStructuredOutput: this prompt has no stored output contract (responseFormat)', {
    errors: [{ field: 'useStructuredOutput', message: 'no responseFormat in the prompt snapshot' }],
  });
}

function universeLease(deps: EngineDeps, universeId: string): LeaseRequest {
  return {
    subject: universeSubject(universeId),
    refused: () => {
      deps.events.leaseConflict();
      return new ConflictError(`universe ${universeId} is answering another request`, { hint: 'retry after that response finishes' });
    },
  };
}

function leaseLost(universeId: string): ConflictError {
  return new ConflictError(`universe ${universeId}: another request took over the universe before this turn was stored`, {
    hint: 'retry; with a requestId the retry is safe',
  });
}

/** The prompt's tokens by the estimate (what a reply is billed for when the provider does not count). */
async function promptTokens(prompt: BuiltPrompt): Promise<number> {
  const tok = await loadTokenEstimator();
  return prompt.messages.reduce((t, m) => t + tok.count(typeof m.content === 'string' ? m.content : ''), 0);
}

interface BuiltPrompt {
  messages: ChatMessage[];
  responseFormat?: Record<string, unknown>;
  window: { start: number; size: number; total: number; aligned: boolean };
  fingerprint: string;
}

function buildPrompt(input: RespondInput, loaded: Loaded, messages: UniverseMessageRow[]): BuiltPrompt {
  let system = loaded.prompt?.text ?? '';
  if (input.useAdditionalInstructions && loaded.prompt?.additionalInstructions) {
    system += `\n\n${loaded.prompt.additionalInstructions}`;
  }
  const responseFormat = input.responseFormat ?? (input.useStructuredOutput ? loaded.prompt?.responseFormat : undefined);
  const runtime = messages.map(toRuntime);
  const w = loaded.mode === 'standalone' ? { start: 0, aligned: false } : universeWindow(runtime);
  const chat: ChatMessage[] = [];
  if (system) chat.push({ role: 'system', content: system });
  for (const m of runtime.slice(w.start)) chat.push(m as ChatMessage);
  return {
    messages: chat,
    responseFormat,
    window: { start: w.start, size: runtime.length - w.start, total: runtime.length, aligned: w.aligned },
    fingerprint: `sha256:${sha256(JSON.stringify(chat))}`,
  };
}

interface SettleOptions {
  called: boolean;
  model?: ChatModel;
  usage?: ProviderUsage;
  prompt?: BuiltPrompt;
  toolCalls?: ToolCallOut[] | ToolCallRef[];
  finishReason?: FinishReason;
}

/** What a turn settles to: its tokens and price, checked output, and the text it answered. */
interface Settled {
  text: string;
  prompt: BuiltPrompt;
  toolCalls?: ToolCallOut[];
  inputTokens: number;
  outputTokens: number;
  cost: number;
  totalMs: number;
  finishReason: FinishReason | null;
  output: Pick<GenerationResponse['diagnostics'], 'structured' | 'warnings'>;
}

/** The response and its log record, for the turn's last write. */
async function settle(turn: Turn, before: UniverseMessageRow[], reply: UniverseMessageRow, o: SettleOptions): Promise<{ response: GenerationResponse; log: LogRow }> {
  const { deps, input, loaded } = turn;
  const prompt = o.prompt ?? buildPrompt({ ...input, useStructuredOutput: false }, loaded, before);
  const tok = await loadTokenEstimator();
  const text = reply.content ?? '';
  const toolCalls = o.toolCalls?.map((c) => ('callId' in c ? c : { callId: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) }));
  const inputTokens = o.called ? (o.usage?.inputTokens ?? (await promptTokens(prompt))) : 0;
  const outputTokens = o.called ? (o.usage?.outputTokens ?? tok.count(text) + tok.count(reply.toolCalls ?? '')) : 0;
  const finishReason = o.called ? (o.finishReason ?? 'stop') : null;
  const s: Settled = {
    text, prompt, toolCalls, inputTokens, outputTokens, finishReason,
    cost: costUsd(deps.prices[input.model], inputTokens, outputTokens),
    totalMs: deps.clock.now() - turn.ctx.t0,
    output: finishReason ? checkOutput(input, prompt, text, finishReason, outputTokens, toolCalls?.length ?? 0) : {},
  };
  const log = logRow(deps, logEntry(turn, o, s));
  return { response: responseBody(turn, reply, o, s, log.id), log };
}

function logEntry(turn: Turn, o: SettleOptions, s: Settled): LogEntry {
  const { input, ctx } = turn;
  return {
    kind: 'text', userId: ctx.userId, gameId: input.gameId ?? null, universeId: turn.universeId, requestId: input.requestId ?? null,
    model: input.model, providerModel: o.model?.modelId ?? null, status: s.toolCalls?.length ? 'tool_calls' : 'ok', error: null,
    inputTokens: s.inputTokens, outputTokens: s.outputTokens, costUsd: s.cost, totalMs: s.totalMs, providerMs: ctx.stages.provider,
    request: requestSummary(input, turn.loaded.mode),
    // The turn's own text stays here, so messages a statePointer later drops are not lost (SPEC 5).
    response: {
      assistantRaw: s.text, toolCalls: s.toolCalls ?? [], promptFingerprint: s.prompt.fingerprint, called: o.called,
      finishReason: s.finishReason, ...s.output, ...cachedOf(o.usage?.cachedTokens),
    },
  };
}

function responseBody(turn: Turn, reply: UniverseMessageRow, o: SettleOptions, s: Settled, logId: string): GenerationResponse {
  const { input, loaded, ctx } = turn;
  const { prompt, inputTokens, outputTokens } = s;
  return {
    assistantRaw: s.text,
    previewText: s.text.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS),
    promptFingerprint: prompt.fingerprint,
    nextUniverseTime: reply.createdAt,
    requestLog: { id: logId },
    usageSettlement: { inputTokens, outputTokens, costUsd: s.cost },
    timingBreakdown: { totalMs: s.totalMs, providerMs: ctx.stages.provider },
    diagnostics: {
      summary: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, latencyMs: s.totalMs, model: input.model, mode: loaded.mode },
      serverStages: ctx.stages,
      storage: { source: loaded.source, ageMs: loaded.ageMs },
      prompt: {
        windowStart: prompt.window.start,
        windowMessages: prompt.window.size,
        totalMessages: prompt.window.total,
        aligned: prompt.window.aligned,
        structuredOutput: prompt.responseFormat !== undefined,
      },
      provider: {
        name: o.model?.provider ?? 'none',
        model: o.model?.modelId ?? '',
        responseFormat: (prompt.responseFormat?.type as string | undefined) ?? null,
        retries: 0,
        called: o.called,
        finishReason: s.finishReason,
      },
      ...s.output,
      ...(input.requestId ? { requestId: input.requestId } : {}),
    },
    ...(s.toolCalls?.length ? { toolCalls: s.toolCalls } : {}),
  };
}

/**
 * What the reply is worth against what was asked: a structured reply that was cut off or does not
 * parse is reported invalid, never passed off as valid; a required tool that was not called is a warning.
 */
function checkOutput(
  input: RespondInput,
  prompt: BuiltPrompt,
  text: string,
  finishReason: FinishReason,
  outputTokens: number,
  toolCalls: number,
): Pick<GenerationResponse['diagnostics'], 'structured' | 'warnings'> {
  const warnings: string[] = [];
  if (finishReason === 'length') warnings.push(`reply cut at ${outputTokens} tokens (the route's maxTokens or the model's context)`);
  const forced = input.toolChoice === 'required' || typeof input.toolChoice === 'object';
  if (forced && toolCalls === 0) {
    const which = typeof input.toolChoice === 'object' ? `the tool ${input.toolChoice.name}` : 'a tool';
    warnings.push(`toolChoice required ${which}, but the provider answered with text`);
  }
  let structured: GenerationResponse['diagnostics']['structured'];
  if (prompt.responseFormat !== undefined && toolCalls === 0) {
    const error = finishReason === 'length' ? 'the reply was cut off before its JSON ended' : jsonError(text);
    structured = { valid: error === null, error };
    if (error) warnings.push(`structured output is not valid: ${error}`);
  }
  return { ...(structured ? { structured } : {}), ...(warnings.length ? { warnings } : {}) };
}

function jsonError(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
}

/** The tool calls of the conversation's last message, when it is (or is followed only by results of) a tool-call message. */
function pendingCalls(messages: UniverseMessageRow[]): ToolCallRef[] {
  const last = lastToolCallMessage(messages);
  return last ? (JSON.parse(last.toolCalls!) as ToolCallRef[]) : [];
}

function lastToolCallMessage(messages: UniverseMessageRow[]): UniverseMessageRow | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'tool') continue;
    return m.role === 'assistant' && m.toolCalls ? m : undefined;
  }
  return undefined;
}

function unansweredCalls(messages: UniverseMessageRow[]): ToolCallRef[] {
  return pendingCalls(messages).filter((c) => !answered(messages, c.id));
}

function answered(messages: UniverseMessageRow[], callId: string): boolean {
  return messages.some((m) => m.role === 'tool' && m.toolCallId === callId);
}

/**
 * When the conversation ends with a final answer and every callId was answered since the last
 * user message (a retried continuation that already completed), the index of that answer.
 */
function finishedToolTurn(messages: UniverseMessageRow[], callIds: string[]): number | null {
  const last = messages.length - 1;
  if (last < 0 || messages[last].role !== 'assistant' || messages[last].toolCalls) return null;
  let u = last;
  while (u >= 0 && messages[u].role !== 'user') u--;
  const turn = new Set(messages.slice(u + 1).flatMap((m) => (m.role === 'tool' && m.toolCallId ? [m.toolCallId] : [])));
  return callIds.every((id) => turn.has(id)) ? last : null;
}

function parseArguments(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw || '{}');
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { raw };
  }
}

/** What a log keeps of a request: the input and its options; never the prompt snapshot or routing. */
function requestSummary(input: RespondInput, mode: Mode): Record<string, unknown> {
  return {
    mode,
    universe: input.universe ?? null,
    userInput: input.userInput ?? null,
    statePointer: input.statePointer ?? null,
    tools: input.tools?.map((t) => t.name) ?? [],
    toolChoice: typeof input.toolChoice === 'object' ? input.toolChoice.name : (input.toolChoice ?? null),
    toolResults: input.toolResults?.length ?? 0,
    useStructuredOutput: input.useStructuredOutput ?? false,
    useAdditionalInstructions: input.useAdditionalInstructions ?? false,
    modelOverride: input.modelOverride ?? null,
  };
}

/** A completed request's stored response, marked as returned again. */
function replayed(response: GenerationResponse): GenerationResponse {
  return { ...response, diagnostics: { ...response.diagnostics, replayed: true } };
}

/** The tokens a response billed (a key's tokens per minute count them): none when it was returned again. */
export function billedTokens(res: GenerationResponse): number {
  return res.diagnostics.replayed ? 0 : res.usageSettlement.inputTokens + res.usageSettlement.outputTokens;
}
