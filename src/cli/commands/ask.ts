import type { Command } from 'commander';
import type { GenerationResponse, RespondInput } from '../../core/wire/universe-types.js';
import { NotFoundError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { readPromptInput } from '../input.js';
import { note, printJson, sanitizeForTerminal, warn } from '../output.js';
import { requestedMaxTokens, sendAndPrint } from './send.js';
import { cutLimit } from '../cut-limit.js';
import { KNOWN_MODELS } from '../../core/models.js';
import { cutNotice } from '../../ui/finish-notice.js';
import { type SamplingFlags, addSamplingOptions, samplingFields } from '../sampling-options.js';

export interface AskOptions extends SamplingFlags {
  model: string;
  system?: string;
  continue?: boolean;
  stream: boolean;
  json?: boolean;
}

/** The aliases the respond API (the seed's POST /responses) takes; any other model is asked as a chat completion. */
const RESPOND_ALIASES = KNOWN_MODELS.filter((m) => m.kind === 'text').map((m) => m.id);

export function registerAsk(program: Command, ctx: CliContext): void {
  examples(
    addSamplingOptions(
      program
        .command('ask')
        .description('ask a model once and stream the answer (nothing is stored but the log); piped stdin goes before TEXT as context')
        .argument('[text]', 'the prompt; - or no TEXT reads stdin')
        .option('-m, --model <name>', `${RESPOND_ALIASES.join(', ')}, mgpt-1-27b, or a model added with mgpt models add`, 'general-frozen-overridable')
        .option('-s, --system <text>', 'a system prompt for this question')
        .option('-c, --continue', 'send to the most recently active entity instead: a turn it remembers')
        .option('--no-stream', 'wait for the whole answer, then print it')
        .option('--json', 'print the whole response object (a chat.completion with -c, sampling options or another -m)'),
    ),
    [
      'mgpt ask "What is a monad, in one paragraph?"',
      'cat notes.md | mgpt ask "summarize"',
      'git diff | mgpt ask -s "You review code tersely." "anything risky here?"',
      'mgpt ask -m tiny --temperature 0 --max-tokens 40 "Once upon a time"',
      'mgpt ask "Name three colours" -o seed 7 -o top_k 20',
      'mgpt ask -c "and the second point?"',
      "mgpt ask hi --json | jq .usageSettlement",
    ],
  ).action((text: string | undefined, o: AskOptions) => runAsk(ctx, text, o));
}

export async function runAsk(ctx: CliContext, text: string | undefined, o: AskOptions): Promise<void> {
  const sampling = samplingFields(o, text);
  const prompt = await readPromptInput(ctx, 'prompt', sampling.text, undefined);
  if (o.continue) return continueLatest(ctx, prompt, o, sampling.fields);
  const backend = await ctx.backend();
  if (backend.kind === 'local' && KNOWN_MODELS.some((m) => m.id === o.model) && ctx.settings().usesDefaultEcho(o.model)) {
    note(ctx, `using the built-in echo provider (no model configured); set one with: mgpt config set models.${o.model}.baseUrl http://127.0.0.1:11434/v1`);
  }
  const printer = textPrinter(ctx, o.stream && !o.json);
  if (RESPOND_ALIASES.includes(o.model) && !sampling.fields) {
    const res = await backend.respond(askInput(prompt, o), { signal: ctx.signal, onDelta: printer.onDelta });
    return finish(ctx, o, printer, res, res.assistantRaw, warnings(res));
  }
  const res = await backend.complete({ model: o.model, system: o.system, prompt, sampling: sampling.fields }, { signal: ctx.signal, onDelta: printer.onDelta });
  const cut = cutNotice(res, cutLimit(ctx, o.model, requestedMaxTokens(sampling.fields)));
  finish(ctx, o, printer, res, res.choices[0]?.message.content ?? '', cut ? [cut] : []);
}

/** Prints text as it streams (or not at all until the end), sanitised for the terminal. */
function textPrinter(ctx: CliContext, streaming: boolean) {
  const p = { printed: '', onDelta: undefined as ((raw: string) => void) | undefined };
  if (streaming) {
    p.onDelta = (raw) => {
      const t = sanitizeForTerminal(raw);
      ctx.io.stdout.write(t);
      p.printed += t;
    };
  }
  return p;
}

/** The answer's end: JSON, or the text not streamed yet, its line ended; then warnings. */
function finish(ctx: CliContext, o: AskOptions, p: { printed: string; onDelta?: unknown }, res: unknown, text: string, notices: string[]): void {
  if (o.json) printJson(ctx.io, res);
  else {
    const shown = p.onDelta ? p.printed : sanitizeForTerminal(text);
    if (!p.onDelta) ctx.io.stdout.write(shown);
    if (shown && !shown.endsWith('\n')) ctx.io.stdout.write('\n');
  }
  for (const w of notices) warn(ctx, w);
}

/**
 * Standalone mode; a system prompt makes it inline mode with an empty conversation (still nothing
 * stored). Built typed: the engine (either backend's) checks it as it checks every respond input.
 */
function askInput(prompt: string, o: AskOptions): RespondInput {
  const input: RespondInput = { model: o.model, userInput: prompt };
  if (o.system !== undefined) input.universeDoc = { prompt: { text: o.system }, conversation: [], runtime: { conversation: [] } };
  return input;
}

function warnings(res: GenerationResponse): string[] {
  return res.diagnostics.warnings ?? [];
}

/** `-c`: a turn on the most recently active entity, printed as `send` prints it. */
async function continueLatest(ctx: CliContext, prompt: string, o: AskOptions, sampling?: Record<string, unknown>): Promise<void> {
  const backend = await ctx.backend();
  const latest = (await backend.listEntities()).data[0];
  if (!latest) throw new NotFoundError('no entity to continue', { hint: 'start one: mgpt entities create --name NAME, or ask without -c' });
  // Always said (on stderr, so stdout stays the reply): a script must see which entity it just wrote to.
  note(ctx, `continuing ${latest.name ?? latest.id}`);
  await sendAndPrint(ctx, latest, prompt, { stream: o.stream, json: o.json, sampling });
}
