import type { Command } from 'commander';
import type { GenerationResponse, RespondInput } from '../../core/universe-types.js';
import { parseRespond } from '../../core/universe-input.js';
import { NotFoundError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { readPromptInput } from '../input.js';
import { note, printJson, sanitizeForTerminal, warn } from '../output.js';
import { sendAndPrint } from './send.js';

export interface AskOptions {
  model: string;
  system?: string;
  continue?: boolean;
  json?: boolean;
}

export function registerAsk(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('ask')
      .description('ask a model once and stream the answer (nothing is stored but the log); piped stdin goes before TEXT as context')
      .argument('[text]', 'the prompt; - or no TEXT reads stdin')
      .option('-m, --model <alias>', 'game-1-lite-frozen, agent-1-lite-frozen or general-frozen-overridable', 'general-frozen-overridable')
      .option('-s, --system <text>', 'a system prompt for this question')
      .option('-c, --continue', 'send to the most recently active entity instead: a turn it remembers')
      .option('--json', 'print the whole response object (with -c: the chat.completion)'),
    [
      'mgpt ask "What is a monad, in one paragraph?"',
      'cat notes.md | mgpt ask "summarize"',
      'git diff | mgpt ask -s "You review code tersely." "anything risky here?"',
      'mgpt ask -c "and the second point?"',
      "mgpt ask hi --json | jq .usageSettlement",
    ],
  ).action((text: string | undefined, o: AskOptions) => runAsk(ctx, text, o));
}

export async function runAsk(ctx: CliContext, text: string | undefined, o: AskOptions): Promise<void> {
  const prompt = await readPromptInput(ctx, 'prompt', text, undefined);
  if (o.continue) return continueLatest(ctx, prompt, o);
  const backend = await ctx.backend();
  if (backend.kind === 'local' && ctx.settings().usesDefaultEcho(o.model)) {
    note(ctx, `using the built-in echo provider (no model configured); set one with: mgpt config set models.${o.model}.baseUrl http://127.0.0.1:11434/v1`);
  }
  let printed = '';
  const onDelta = o.json ? undefined : (raw: string) => {
    const t = sanitizeForTerminal(raw);
    ctx.io.stdout.write(t);
    printed += t;
  };
  const res = await backend.respond(askBody(prompt, o), { signal: ctx.signal, onDelta });
  if (o.json) printJson(ctx.io, res);
  else if (printed && !printed.endsWith('\n')) ctx.io.stdout.write('\n');
  for (const w of warnings(res)) warn(ctx, w);
}

/** Standalone mode; a system prompt makes it inline mode with an empty conversation (still nothing stored). */
function askBody(prompt: string, o: AskOptions): RespondInput {
  const body: Record<string, unknown> = { model: o.model, userInput: prompt };
  if (o.system !== undefined) body.universeDoc = { prompt: { text: o.system }, conversation: [], runtime: { conversation: [] } };
  return parseRespond(body);
}

function warnings(res: GenerationResponse): string[] {
  return res.diagnostics.warnings ?? [];
}

/** `-c`: a turn on the most recently active entity, printed as `send` prints it. */
async function continueLatest(ctx: CliContext, prompt: string, o: AskOptions): Promise<void> {
  const backend = await ctx.backend();
  const latest = (await backend.listEntities()).data[0];
  if (!latest) throw new NotFoundError('no entity to continue', { hint: 'start one: mgpt entities create --name NAME, or ask without -c' });
  if (ctx.flags.verbose || ctx.io.stderrIsTTY) note(ctx, `continuing ${latest.name ?? latest.id}`);
  await sendAndPrint(ctx, latest.id, prompt, { stream: true, json: o.json });
}
