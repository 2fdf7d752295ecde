import { BadRequestError, ConflictError } from '../core/errors.js';
import { costUsd } from '../core/models.js';
import { loadTokenEstimator } from '../core/tokens.js';
import { splitsToolGroup, universeWindow } from '../core/universe-window.js';
import {
  type GenerationResponse,
  LOCAL_USER_ID,
  PREVIEW_CHARS,
  type RespondInput,
  type ToolCallOut,
  type ToolCallRef,
  toolResultContent,
} from '../core/universe-types.js';
import type { ChatMessage, ChatModel } from '../providers/spec.js';
import type { RequestRow, UniverseMessageRow, UniverseRow } from '../store/types.js';
import type { EngineDeps } from './deps.js';
import { sha256 } from '../core/hash.js';
import { type HeldLease, takeLease, universeSubject } from './lease.js';
import { writeLog } from './logs.js';
import { validateRespond } from './respond-validate.js';
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
 * SPEC section 5). In stored mode the user message is stored at once, tool-call messages before
 * the response returns, tool results only when new for the pending turn, and the final text when
 * produced; a requestId makes retries safe.
 */
export async function respond(
  deps: EngineDeps,
  universes: UniverseService,
  body: unknown,
  opts: { userId?: string; signal?: AbortSignal; onDelta?: (text: string) => void } = {},
): Promise<GenerationResponse> {
  const userId = opts.userId ?? LOCAL_USER_ID;
  const clock = deps.clock;
  const t0 = clock.now();
  const input = validateRespond(body);
  const stages = { auth: 0, load: 0, truncate: 0, promptBuild: 0, provider: 0 };
  stages.auth = clock.now() - t0;

  const requestRow = input.requestId ? await deps.store.universes.request(userId, input.requestId) : undefined;
  if (requestRow?.status === 'done' && requestRow.response) return replayed(JSON.parse(requestRow.response) as GenerationResponse);

  // One writer per universe, like an entity: messages are numbered from what this turn read.
  const lease = input.universe !== undefined ? await takeUniverseLease(deps, (await universes.owned(input.universe, userId)).id) : undefined;
  try {
    return await respondHeld(deps, universes, input, { userId, signal: opts.signal, onDelta: opts.onDelta, t0, stages, requestRow, lease });
  } finally {
    await lease?.release();
  }
}

interface HeldContext {
  userId: string;
  signal?: AbortSignal;
  /** The reply's text as it is generated. */
  onDelta?: (text: string) => void;
  t0: number;
  stages: GenerationResponse['diagnostics']['serverStages'];
  requestRow: RequestRow | undefined;
  lease?: HeldLease;
}

/** The turn, once the universe (if any) is leased: every check comes before anything is stored. */
async function respondHeld(
  deps: EngineDeps,
  universes: UniverseService,
  input: RespondInput,
  ctx: HeldContext,
): Promise<GenerationResponse> {
  const { userId, t0, stages, requestRow, lease } = ctx;
  const clock = deps.clock;
  let tStage = clock.now();
  const loaded = await load(deps, universes, input, userId);
  stages.load = clock.now() - tStage;
  checkStructured(input, loaded);
  const { mode } = loaded;
  let messages = loaded.messages;
  const universeId = loaded.universe?.id ?? null;
  // A retry after a failure whose user message was stored: continue from it, store nothing twice.
  const resumed =
    mode === 'stored' &&
    requestRow?.status === 'failed' &&
    requestRow.universeId === universeId &&
    requestRow.userSeq !== null &&
    messages[requestRow.userSeq - 1]?.role === 'user' &&
    messages[requestRow.userSeq - 1]?.content === input.userInput;

  tStage = clock.now();
  let truncateTo: number | undefined;
  if (input.statePointer !== undefined && !resumed) {
    const p = input.statePointer;
    if (p > messages.length || splitsToolGroup(messages.map(toRuntime), p)) {
      const why = p > messages.length ? `is beyond the ${messages.length} stored messages` : 'falls inside a tool-call group';
      throw new BadRequestError(`statePointer ${p} ${why}`, { errors: [{ field: 'statePointer', message: why }] });
    }
    if (p < messages.length) {
      // Dropped from the live transcript (stored with the turn's first write, after every check);
      // what was said stays in the generation logs.
      if (mode === 'stored') truncateTo = p;
      messages = messages.slice(0, p);
    }
  }
  stages.truncate = clock.now() - tStage;

  /** Stores rows (and a pending truncation) while the lease is ours; the last write also frees it. */
  const append = async (rows: UniverseMessageRow[], last = false) => {
    messages = [...messages, ...rows];
    const cut = truncateTo;
    if (mode !== 'stored' || !lease || universeId === null || (rows.length === 0 && cut === undefined && !last)) return;
    const write = { universeId, truncateTo: cut, append: rows, touch: { messages: messages.length, updatedAt: clock.iso() }, release: last };
    await lease.write((claim) => deps.store.universes.write({ ...write, lease: claim }), () => leaseLost(universeId), last);
    truncateTo = undefined;
  };
  const newRow = (r: Omit<UniverseMessageRow, 'seq' | 'createdAt'>, offset = 0): UniverseMessageRow => ({
    ...r,
    seq: messages.length + 1 + offset,
    createdAt: clock.iso(),
  });

  const pending = pendingCalls(messages);
  const unanswered = () => pendingCalls(messages).filter((c) => !answered(messages, c.id));
  const results = input.toolResults ?? [];
  let userSeq = resumed ? requestRow!.userSeq : null;
  if (results.length) {
    if (pending.length === 0) {
      const replay = finishedToolTurn(messages, results.map((r) => r.callId));
      if (replay === null) {
        throw new BadRequestError('no turn is waiting for tool results', {
          errors: results.map((r, i) => ({ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` })),
        });
      }
      // A retry of a continuation that already completed: answer it again, store nothing new.
      await append([]);
      return finish(deps, input, loaded, messages.slice(0, replay), messages[replay], { conversation: messages, stages, t0, userId, called: false });
    }
    // Results are cumulative: those answered earlier (this round or a previous one) are skipped.
    const known = new Set(pending.map((c) => c.id));
    const bad = results.flatMap((r, i) =>
      known.has(r.callId) || answered(messages, r.callId) ? [] : [{ field: `toolResults[${i}].callId`, message: `${r.callId} is not pending` }],
    );
    if (bad.length) throw new BadRequestError('tool results for calls that are not pending', { errors: bad });
    const fresh: UniverseMessageRow[] = [];
    for (const r of results) {
      if (!known.has(r.callId) || answered(messages, r.callId) || fresh.some((f) => f.toolCallId === r.callId)) continue;
      fresh.push(
        newRow(
          { role: 'tool', content: toolResultContent(r), toolCalls: null, toolCallId: r.callId, toolName: r.name, toolOk: r.ok ? 1 : 0 },
          fresh.length,
        ),
      );
    }
    await append(fresh);
    const waiting = unanswered();
    if (waiting.length) {
      // Results for some calls only: the provider cannot continue until all are answered.
      const last = lastToolCallMessage(messages)!;
      return finish(deps, input, loaded, messages, last, { conversation: messages, stages, t0, userId, called: false, toolCalls: waiting });
    }
  } else {
    if (unanswered().length) {
      const ids = unanswered().map((c) => c.id).join(', ');
      throw new BadRequestError(`a turn is waiting for tool results (${ids}); send toolResults, or move statePointer back`, {
        errors: [{ field: 'toolResults', message: `required while calls ${ids} are pending` }],
      });
    }
    if (!resumed) {
      await append([newRow({ role: 'user', content: input.userInput, toolCalls: null, toolCallId: null, toolName: null, toolOk: null })]);
      userSeq = messages.length;
    }
  }

  // Prompt build: snapshot system prompt, then the 64/16 window.
  tStage = clock.now();
  const built = buildPrompt(input, loaded, messages);
  stages.promptBuild = clock.now() - tStage;

  tStage = clock.now();
  let model: ChatModel | undefined;
  let text = '';
  const calls: ToolCallOut[] = [];
  const refs: ToolCallRef[] = [];
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let finishReason: string | undefined;
  try {
    model = await deps.chatModel(input.model, input.modelOverride);
    for await (const part of model.stream({
      messages: built.messages,
      tools: input.tools,
      toolChoice: input.toolChoice,
      responseFormat: built.responseFormat,
      signal: ctx.signal,
    })) {
      if (part.type === 'text-delta') {
        text += part.text;
        ctx.onDelta?.(part.text);
      } else if (part.type === 'usage') usage = part.usage;
      else if (part.type === 'finish') finishReason = part.reason;
      else if (part.type === 'error') throw part.error;
      else if (part.type === 'tool-call') {
        const callId = part.callId || `call_${deps.newId()}`;
        refs.push({ id: callId, type: 'function', function: { name: part.name, arguments: part.arguments } });
        calls.push({ callId, name: part.name, arguments: parseArguments(part.arguments) });
      }
    }
  } catch (err) {
    stages.provider = clock.now() - tStage;
    if (input.requestId && mode === 'stored') {
      await deps.store.universes.saveRequest(
        { userId, requestId: input.requestId, universeId, status: 'failed', userSeq: userSeq ?? null, response: null },
        clock.iso(),
      );
    }
    await writeLog(deps, {
      kind: 'text', userId, gameId: input.gameId ?? null, universeId, requestId: input.requestId ?? null, model: input.model,
      providerModel: model?.modelId ?? null, status: 'error', error: err instanceof Error ? err.message : String(err),
      inputTokens: 0, outputTokens: 0, costUsd: 0, totalMs: clock.now() - t0, providerMs: stages.provider,
      request: requestSummary(input, mode), response: {},
    });
    throw err;
  }
  stages.provider = clock.now() - tStage;

  const reply = newRow(
    calls.length
      ? { role: 'assistant', content: text || null, toolCalls: JSON.stringify(refs), toolCallId: null, toolName: null, toolOk: null }
      : { role: 'assistant', content: text, toolCalls: null, toolCallId: null, toolName: null, toolOk: null },
  );
  await append([reply], true);
  return finish(deps, input, loaded, messages.slice(0, -1), reply, {
    conversation: messages, stages, t0, userId, called: true, model, usage, prompt: built, toolCalls: calls.length ? calls : undefined,
    finishReason: finishReason ?? (calls.length ? 'tool_calls' : 'stop'),
  });
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

function takeUniverseLease(deps: EngineDeps, universeId: string): Promise<HeldLease> {
  return takeLease(deps, {
    subject: universeSubject(universeId),
    refused: () => new ConflictError(`universe ${universeId} is answering another request`, { hint: 'retry after that response finishes' }),
  });
}

function leaseLost(universeId: string): ConflictError {
  return new ConflictError(`universe ${universeId}: another request took over the universe before this turn was stored`, {
    hint: 'retry; with a requestId the retry is safe',
  });
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

interface FinishOptions {
  /** The whole conversation as it now stands (what the cache keeps). */
  conversation: UniverseMessageRow[];
  stages: GenerationResponse['diagnostics']['serverStages'];
  t0: number;
  userId: string;
  called: boolean;
  model?: ChatModel;
  usage?: { inputTokens: number; outputTokens: number };
  prompt?: BuiltPrompt;
  toolCalls?: ToolCallOut[] | ToolCallRef[];
  finishReason?: string;
}

/** Builds the response, writes its log record and (with a requestId) the request's outcome. */
async function finish(
  deps: EngineDeps,
  input: RespondInput,
  loaded: Loaded,
  before: UniverseMessageRow[],
  reply: UniverseMessageRow,
  o: FinishOptions,
): Promise<GenerationResponse> {
  const clock = deps.clock;
  const prompt = o.prompt ?? buildPrompt({ ...input, useStructuredOutput: false }, loaded, before);
  const tok = await loadTokenEstimator();
  const text = reply.content ?? '';
  const toolCalls = o.toolCalls?.map((c) =>
    'callId' in c ? c : { callId: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) },
  );
  const inputTokens = o.called ? (o.usage?.inputTokens ?? prompt.messages.reduce((t, m) => t + tok.count(typeof m.content === 'string' ? m.content : ''), 0)) : 0;
  const outputTokens = o.called ? (o.usage?.outputTokens ?? tok.count(text) + tok.count(reply.toolCalls ?? '')) : 0;
  const cost = costUsd(deps.prices[input.model], inputTokens, outputTokens);
  const totalMs = clock.now() - o.t0;
  const universeId = loaded.universe?.id ?? null;
  const output = o.called ? checkOutput(input, prompt, text, o.finishReason ?? 'stop', outputTokens, toolCalls?.length ?? 0) : {};
  const log = await writeLog(deps, {
    kind: 'text', userId: o.userId, gameId: input.gameId ?? null, universeId, requestId: input.requestId ?? null,
    model: input.model, providerModel: o.model?.modelId ?? null, status: toolCalls?.length ? 'tool_calls' : 'ok', error: null,
    inputTokens, outputTokens, costUsd: cost, totalMs, providerMs: o.stages.provider,
    request: requestSummary(input, loaded.mode),
    // The turn's own text stays here, so messages a statePointer later drops are not lost (SPEC 5).
    response: {
      assistantRaw: text, toolCalls: toolCalls ?? [], promptFingerprint: prompt.fingerprint, called: o.called,
      finishReason: o.called ? (o.finishReason ?? 'stop') : null, ...output,
    },
  });
  const response: GenerationResponse = {
    assistantRaw: text,
    previewText: text.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS),
    promptFingerprint: prompt.fingerprint,
    nextUniverseTime: reply.createdAt,
    requestLog: { id: log },
    usageSettlement: { inputTokens, outputTokens, costUsd: cost },
    timingBreakdown: { totalMs, providerMs: o.stages.provider },
    diagnostics: {
      summary: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, latencyMs: totalMs, model: input.model, mode: loaded.mode },
      serverStages: o.stages,
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
        finishReason: o.called ? (o.finishReason ?? 'stop') : null,
      },
      ...output,
      ...(input.requestId ? { requestId: input.requestId } : {}),
    },
    ...(toolCalls?.length ? { toolCalls } : {}),
  };
  if (loaded.mode === 'stored' && universeId) {
    const u = await deps.store.universes.get(universeId);
    if (u) deps.universeCache.set(universeId, `${u.messages}:${u.updatedAt}`, o.conversation);
    if (input.requestId) {
      await deps.store.universes.saveRequest(
        { userId: o.userId, requestId: input.requestId, universeId, status: 'done', userSeq: null, response: JSON.stringify(response) },
        clock.iso(),
      );
    }
  }
  return response;
}

/**
 * What the reply is worth against what was asked: a structured reply that was cut off or does not
 * parse is reported invalid, never passed off as valid; a required tool that was not called is a warning.
 */
function checkOutput(
  input: RespondInput,
  prompt: BuiltPrompt,
  text: string,
  finishReason: string,
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
