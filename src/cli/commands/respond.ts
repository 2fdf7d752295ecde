import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import { parseRespond } from '../../core/wire/universe-input.js';
import { runToolLoop } from '../../ui/tool-loop.js';
import { type GenerationResponse, TEXT_ALIASES, type ToolCallOut, type ToolResultInput, UNIVERSE_MODEL, type UniverseDoc, toolResultContent } from '../../core/wire/universe-types.js';
import { execTool } from '../tool-exec.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { intOption, readJsonFile, readTextInput } from '../input.js';
import { note, printJson, warn } from '../output.js';
import { UUID } from '../../core/ids.js';


export interface RespondOptions {
  model: string;
  modelOverride?: string;
  doc?: string;
  tools?: string;
  toolChoice?: string;
  toolExec?: string;
  toolResults?: string;
  statePointer?: string;
  requestId?: string;
  structured?: boolean;
  additionalInstructions?: boolean;
  responseFormat?: string;
  game?: string;
  file?: string;
  json?: boolean;
}

export function registerRespond(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('respond')
      .description('generate the next assistant turn of a universe (or inline with --doc, or standalone)')
      .argument('[universe]', 'universe id; with TEXT also an id prefix or display name (omit for standalone mode, or with --doc)')
      .argument('[text]', 'the user input; - reads stdin')
      .option('--model <alias>', TEXT_ALIASES.join(', ').replace(/, (?=[^,]*$)/, ' or '), UNIVERSE_MODEL)
      .option('--model-override <id>', 'provider model id (only with general-frozen-overridable)')
      .option('-f, --file <file>', 'read the user input from a file')
      .option('--doc <file>', 'inline mode: a universe document (mgpt universes show ID --doc); nothing is stored')
      .option('--tools <file>', 'JSON array of tool definitions ({ type: "function", name, parameters })')
      .option('--tool-choice <choice>', 'auto, none, required, or a tool name')
      .option('--tool-exec <cmd>', 'run each tool call: CMD gets {callId,name,arguments} as JSON on stdin and prints the output JSON')
      .option('--tool-results <file>', 'JSON array of tool results ({ callId, name, output, ok }) for a pending turn')
      .option('--state-pointer <n>', 'keep only the first N runtime messages before this turn (a branch)')
      .option('--request-id <id>', 'retries with the same id are de-duplicated')
      .option('--structured', "use the stored output contract as the response format")
      .option('--additional-instructions', "append the stored additional instructions to the system prompt")
      .option('--response-format <file>', 'JSON file: an inline response_format')
      .option('--game <id>', 'hosted game id (recorded in the logs)')
      .option('--json', 'print the whole response object'),
    [
      'mgpt respond $U "I open the door."',
      'echo "look around" | mgpt respond $U -',
      'mgpt respond $U "roll for it" --tools tools.json --tool-exec ./run-tool.sh',
      'mgpt respond --doc doc.json "what now?" --json',
      'mgpt respond "Say hi in French." --model general-frozen-overridable --model-override openai/gpt-4o-mini',
    ],
  ).action((a: string | undefined, b: string | undefined, o: RespondOptions) => runRespond(ctx, a, b, o));
}

export async function runRespond(ctx: CliContext, a: string | undefined, b: string | undefined, o: RespondOptions): Promise<void> {
  // Two positionals: a universe (id, id prefix or display name) and the text. One: a universe id,
  // or the text (inline and standalone modes).
  let universe: string | undefined;
  let text: string | undefined;
  if (b !== undefined) [universe, text] = [a, b];
  else if (a !== undefined && UUID.test(a) && !o.doc) universe = a;
  else text = a;
  if (o.doc && universe) throw new BadRequestError('--doc (inline mode) and a universe id are mutually exclusive');
  // Answering a pending turn needs no new input: `mgpt respond U --tool-results FILE`.
  const userInput = o.toolResults && text === undefined && o.file === undefined ? '' : await readTextInput(ctx, 'user input', text, o.file);
  const body: Record<string, unknown> = { model: o.model, userInput };
  if (universe) body.universe = await (await ctx.backend()).resolveUniverse(universe);
  let doc: UniverseDoc | undefined;
  if (o.doc) body.universeDoc = doc = (await readJsonFile(o.doc, '--doc')) as UniverseDoc;
  if (o.modelOverride) body.modelOverride = o.modelOverride;
  if (o.tools) body.tools = await readJsonFile(o.tools, '--tools');
  if (o.toolChoice) body.toolChoice = ['auto', 'none', 'required'].includes(o.toolChoice) ? o.toolChoice : { type: 'function', name: o.toolChoice };
  if (o.toolResults) body.toolResults = await readJsonFile(o.toolResults, '--tool-results');
  const pointer = intOption('--state-pointer', o.statePointer, 0);
  if (pointer !== undefined) body.statePointer = pointer;
  if (o.requestId) body.requestId = o.requestId;
  if (o.structured) body.useStructuredOutput = true;
  if (o.additionalInstructions) body.useAdditionalInstructions = true;
  if (o.responseFormat) body.responseFormat = await readJsonFile(o.responseFormat, '--response-format');
  if (o.game) body.gameId = o.game;

  const backend = await ctx.backend();
  const given = (body.toolResults as ToolResultInput[] | undefined) ?? [];
  const { response: res } = await runToolLoop({
    respond: (b, opts) => backend.respond(b, opts),
    body: parseRespond(body),
    results: given,
    runTool: o.toolExec ? (call) => execTool(o.toolExec!, call) : undefined,
    signal: ctx.signal,
    onToolCalls: (r, open, round) => {
      if (!o.toolExec) return;
      if (ctx.flags.verbose) for (const call of open) note(ctx, `tool ${call.name}(${JSON.stringify(call.arguments)})`);
      if (doc) inlineToolCalls(doc, r, round === 0 && given.length === 0 ? userInput : undefined);
    },
    onToolResult: (_call, result) => {
      if (doc) doc.runtime.conversation.push({ role: 'tool', tool_call_id: result.callId, name: result.name, content: toolResultContent(result) });
    },
  });
  // Warnings go to stderr in every mode, so a script reading --json still sees them in its log.
  for (const w of res.diagnostics.warnings ?? []) warn(ctx, w);
  const pending = res.toolCalls ?? [];
  // A turn left waiting still succeeded (exit 0, as a script expects), but it says so on stderr
  // in every mode: the next input to this universe is refused until the calls are answered.
  if (pending.length) pendingNotice(ctx, pending, universe === undefined ? undefined : String(body.universe));
  if (o.json) return printJson(ctx.io, pending.length ? { ...res, pending_tool_calls: pending } : res);
  if (res.assistantRaw) ctx.io.stdout.write(res.assistantRaw.endsWith('\n') ? res.assistantRaw : res.assistantRaw + '\n');
  if (ctx.flags.verbose) {
    const d = res.diagnostics;
    note(ctx, `log ${res.requestLog.id}; window ${d.prompt.windowStart}+${d.prompt.windowMessages}/${d.prompt.totalMessages}; ${res.usageSettlement.inputTokens}+${res.usageSettlement.outputTokens} tokens; ${res.timingBreakdown.totalMs} ms`);
  }
}

/** Names each pending call and the exact command that answers them. */
function pendingNotice(ctx: CliContext, calls: ToolCallOut[], universe: string | undefined): void {
  for (const c of calls) ctx.io.stderr.write(`tool call ${c.callId}: ${c.name} ${JSON.stringify(c.arguments)}\n`);
  const file = JSON.stringify(calls.map((c) => ({ callId: c.callId, name: c.name, output: {}, ok: true })));
  const answer = universe ? `mgpt respond ${universe} --tool-results FILE` : 'the same command with --tool-results FILE';
  ctx.io.stderr.write(`the turn waits for tool results (${calls.map((c) => c.callId).join(', ')}): answer with \`${answer}\`, FILE holding ${file}\n`);
}

/**
 * Inline mode stores nothing: the document itself carries the pending tool-call turn (the user
 * input first, when the turn starts here, then the assistant's tool calls).
 */
function inlineToolCalls(doc: UniverseDoc, res: GenerationResponse, userInput: string | undefined): void {
  if (userInput !== undefined) doc.runtime.conversation.push({ role: 'user', content: userInput });
  doc.runtime.conversation.push({
    role: 'assistant',
    content: res.assistantRaw || null,
    tool_calls: (res.toolCalls ?? []).map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
  });
}
