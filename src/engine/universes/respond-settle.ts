import type { FinishReason } from '../../core/wire/entity-types.js';
import { costUsd } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import { type GenerationResponse, PREVIEW_CHARS, type RespondInput, type ToolCallOut, type ToolCallRef } from '../../core/wire/universe-types.js';
import type { ChatModel, ProviderUsage } from '../../providers/spec.js';
import type { LogRow, UniverseMessageRow } from '../../store/types.js';
import { reportCompleted } from '../generation/model-call.js';
import { type LogEntry, cachedOf, logRow } from '../platform/logs.js';
import { parseArguments } from './tool-calls.js';
import { type BuiltPrompt, buildPrompt, promptTokens } from './universe-prompt.js';
import type { Mode, Turn } from './universe-turn.js';

/** Settles the turn and writes it: `rows`, its log record and the request's outcome in one unit of work. */
export async function complete(turn: Turn, rows: UniverseMessageRow[], before: UniverseMessageRow[], reply: UniverseMessageRow, o: SettleOptions): Promise<GenerationResponse> {
  const { response, log } = await settle(turn, before, reply, o);
  await turn.write(rows, { request: turn.request('done', response), end: { log } });
  const { ctx } = turn;
  if (o.called) reportCompleted(turn.deps, { kind: 'universe', t0: ctx.t0, firstTokenAt: ctx.firstTokenAt, promptTokens: log.inputTokens, cachedTokens: o.usage?.cachedTokens });
  return response;
}

export interface SettleOptions {
  called: boolean;
  model?: ChatModel;
  usage?: ProviderUsage;
  prompt?: BuiltPrompt;
  toolCalls?: ToolCallOut[] | ToolCallRef[];
  finishReason?: FinishReason;
}

/** What a turn settles to: its tokens and price, checked output, and the text it answered. */
export interface Settled {
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
export async function settle(turn: Turn, before: UniverseMessageRow[], reply: UniverseMessageRow, o: SettleOptions): Promise<{ response: GenerationResponse; log: LogRow }> {
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

export function logEntry(turn: Turn, o: SettleOptions, s: Settled): LogEntry {
  const { input, ctx } = turn;
  return {
    kind: 'text', userId: ctx.userId, gameId: input.gameId ?? null, universeId: turn.universeId, requestId: input.requestId ?? null,
    model: input.model, providerModel: o.model?.modelId ?? null, status: s.toolCalls?.length ? 'tool_calls' : 'ok', error: null,
    inputTokens: s.inputTokens, outputTokens: s.outputTokens, costUsd: s.cost, totalMs: s.totalMs, providerMs: ctx.stages.provider,
    request: requestSummary(input, turn.loaded.mode),
    // The turn's own text stays here, so messages a statePointer later drops are not lost (docs/design.md#logs).
    response: {
      assistantRaw: s.text, toolCalls: s.toolCalls ?? [], promptFingerprint: s.prompt.fingerprint, called: o.called,
      finishReason: s.finishReason, ...s.output, ...cachedOf(o.usage?.cachedTokens),
    },
  };
}

export function responseBody(turn: Turn, reply: UniverseMessageRow, o: SettleOptions, s: Settled, logId: string): GenerationResponse {
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
export function checkOutput(
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

export function jsonError(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
}

/** What a log keeps of a request: the input and its options; never the prompt snapshot or routing. */
export function requestSummary(input: RespondInput, mode: Mode): Record<string, unknown> {
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
