import { BadRequestError, CancelledError, TURN_CANCELLED } from '../core/errors.js';
import { type GenerationResponse, MAX_TOOL_ROUNDS, type RespondInput, type ToolCallOut, type ToolResultInput } from '../core/wire/universe-types.js';

/**
 * A tool's answer (what a `--tool-exec` command printed, or what a person typed) as the `output`
 * object a tool result must carry (`output` is an object: docs/design.md#turn-storage-and-tool-continuation). A JSON object is
 * kept as it is; any other JSON value becomes `{ value }`; text that is not JSON becomes `{ text }`
 * (trimmed). `respond --tool-exec` and the REPL both answer through this one rule.
 */
export function toolOutput(answer: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(answer);
  } catch {
    return { text: answer.trim() };
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

export interface ToolLoop {
  /** POST /responses: `Backend.respond`. */
  respond(input: RespondInput, opts: { signal?: AbortSignal }): Promise<GenerationResponse>;
  /** The request, sent again with the cumulative `toolResults` after each round. */
  body: RespondInput;
  /** Results already given for the pending turn (`--tool-results`, answers the person typed). */
  results?: readonly ToolResultInput[];
  /** Runs one call; without it the loop stops at the first tool calls and leaves the turn pending. */
  runTool?: (call: ToolCallOut) => Promise<ToolResultInput>;
  signal?: AbortSignal;
  /** A response that asks for tools; `open`: its calls not answered yet. */
  onToolCalls?(res: GenerationResponse, open: ToolCallOut[], round: number): void;
  onToolResult?(call: ToolCallOut, result: ToolResultInput): void;
}

export interface ToolLoopOutcome {
  /** The last response: the final text, or (with `pending`) the tool calls waiting for results. */
  response: GenerationResponse;
  /** Every result sent for the turn, cumulative. */
  results: ToolResultInput[];
  /** Calls that wait for results because there is no runner; empty when the turn ended. */
  pending: ToolCallOut[];
}

/**
 * One turn of a universe with its tool calls (seed 000 "tool continuation"): ask, run each open
 * call, ask again with the cumulative results, until the reply has no tool calls (at most
 * MAX_TOOL_ROUNDS rounds). `respond --tool-exec` and the REPL both run their turns through it.
 */
export async function runToolLoop(loop: ToolLoop): Promise<ToolLoopOutcome> {
  const results = [...(loop.results ?? [])];
  const ask = () => loop.respond(results.length ? { ...loop.body, toolResults: results } : loop.body, { signal: loop.signal });
  let res = await ask();
  for (let round = 0; res.toolCalls?.length; round++) {
    const open = res.toolCalls.filter((c) => !results.some((r) => r.callId === c.callId));
    loop.onToolCalls?.(res, open, round);
    if (!loop.runTool) return { response: res, results, pending: open };
    if (round >= MAX_TOOL_ROUNDS) throw new BadRequestError(`stopped after ${MAX_TOOL_ROUNDS} rounds of tool calls`);
    for (const call of open) {
      const result = await loop.runTool(call);
      results.push(result);
      loop.onToolResult?.(call, result);
    }
    if (loop.signal?.aborted) throw new CancelledError(TURN_CANCELLED);
    res = await ask();
  }
  return { response: res, results, pending: [] };
}
