import type { Command } from 'commander';
import type { Backend } from '../../core/backend.js';
import { ENTITY_MODEL, type EntityCompletion } from '../../core/wire/entity-types.js';
import { cutNotice, recallNotice, rotationNotice, usageText } from '../../ui/finish-notice.js';
import { cutLimit } from '../cut-limit.js';
import { checkRoute, localRouteText } from '../route-memory.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { readPromptInput } from '../input.js';
import { note, printJson, sanitizeForTerminal, warn } from '../output.js';
import { type SamplingFlags, addSamplingOptions, samplingFields } from '../sampling-options.js';

export interface SendOptions extends SamplingFlags {
  file?: string;
  stream: boolean;
  idempotencyKey?: string;
  json?: boolean;
  memoryTool?: boolean;
  at?: string;
}

export function registerSend(program: Command, ctx: CliContext): void {
  examples(
    addSamplingOptions(
      program
      .command('send')
      .description('send a message to an entity and print the reply as it streams')
      .argument('<entity>', 'entity id or exact name')
      .argument('[text]', 'the message; - reads stdin; piped stdin with TEXT goes before it as context')
      .option('-f, --file <file>', 'read the message from a file')
      .option('--no-stream', 'wait for the whole reply, then print it')
      .option('--idempotency-key <key>', 'a retry with the same key returns the same reply and appends nothing')
      .option('--memory-tool', "this turn offers the model remember({label, text}), which sets a pinned memory block (see mgpt memory); default: the entity's setting (entities update --memory-tool)")
      .option('--no-memory-tool', "this turn does not offer remember, whatever the entity's setting")
      .option('--at <time>', 'when the message was written (ISO 8601: 2024-05-07T10:00:00Z, an offset, or a date); it and its reply are stored with that date, which recalled lines show')
      .option('--json', 'print the chat.completion object (implies --no-stream)'),
    ),
    [
      'mgpt send ada "What did we decide yesterday?"',
      'echo hi | mgpt send ada -',
      'cat notes.md | mgpt send ada "What should I do first?"',
      'mgpt send ada -f question.txt --idempotency-key q-2026-11-22-1',
      'mgpt send ada --temperature 0.2 --max-tokens 200 "Summarise our plan"',
      'mgpt send ada --memory-tool "Remember that I moved to Porto"',
      "mgpt send ada hi --json | jq -r '.choices[0].message.content'",
      'mgpt send ada --at 2024-05-07T10:00:00Z "Jon mentored me on my first talk today"',
    ],
  ).action((ref: string, text: string | undefined, o: SendOptions) => runSend(ctx, ref, text, o));
}

export async function runSend(ctx: CliContext, ref: string, text: string | undefined, o: SendOptions): Promise<void> {
  const sampling = samplingFields(o, text);
  const content = await readPromptInput(ctx, 'message', sampling.text, o.file);
  const entity = await resolveEntity(ctx, ref);
  await sendAndPrint(ctx, entity, content, { ...o, sampling: sampling.fields });
}

/** Sends one message and prints the reply: streamed, buffered or as JSON, with the notices a person needs. */
export async function sendAndPrint(
  ctx: CliContext,
  entity: { id: string; model: string; name?: string },
  content: string,
  o: { stream: boolean; json?: boolean; idempotencyKey?: string; sampling?: Record<string, unknown>; memoryTool?: boolean; at?: string },
): Promise<void> {
  const backend = await ctx.backend();
  if (backend.kind === 'local' && ctx.settings().usesDefaultEcho(ENTITY_MODEL)) {
    note(ctx, 'using the built-in echo provider (no model configured); set one with: mgpt config set models.mgpt-1-27b.baseUrl http://127.0.0.1:11434/v1');
  }
  await checkRoute(ctx, entity);
  if (ctx.flags.verbose) note(ctx, `route: ${entity.model} -> ${localRouteText(ctx, entity.model) ?? "the server's route"} (${routeWhere(ctx)})`);
  const started = performance.now();
  const streaming = o.stream && !o.json;
  const { completion, printed } = await streamTurn(ctx, backend, entity.id, content, { ...o, streaming });
  if (completion) printCompletion(ctx, completion, { json: o.json, streaming, printed, started, maxTokens: requestedMaxTokens(o.sampling) });
}

/** Where the route comes from: the profile on the local backend, the server on a remote one. */
function routeWhere(ctx: CliContext): string {
  const s = ctx.settings();
  return s.backend === 'local' ? `profile ${s.profile}` : `remote ${s.baseUrl ?? ''}`.trim();
}

/** The reply length a command asked for (--max-tokens), to say which limit cut a reply. */
export function requestedMaxTokens(sampling?: Record<string, unknown>): number | undefined {
  return typeof sampling?.max_tokens === 'number' ? sampling.max_tokens : undefined;
}

/** The turn's events: text to stdout as it streams, rotation and replay notices to stderr. */
async function streamTurn(
  ctx: CliContext,
  backend: Backend,
  entityId: string,
  content: string,
  o: { idempotencyKey?: string; streaming: boolean; sampling?: Record<string, unknown>; memoryTool?: boolean; at?: string },
): Promise<{ completion?: EntityCompletion; printed: string }> {
  let completion: EntityCompletion | undefined;
  let printed = '';
  try {
    for await (const ev of backend.sendMessage(entityId, { content, idempotencyKey: o.idempotencyKey, signal: ctx.signal, sampling: o.sampling, buffered: !o.streaming, ...(o.memoryTool !== undefined ? { memoryTool: o.memoryTool } : {}), ...(o.at !== undefined ? { at: o.at } : {}) })) {
      if (ev.type === 'delta' && o.streaming) {
        // A model's text, not the terminal's: no escape sequence of it reaches the screen.
        const text = sanitizeForTerminal(ev.text);
        ctx.io.stdout.write(text);
        printed += text;
      } else if (ev.type === 'rotation' && (ctx.flags.verbose || ctx.io.stderrIsTTY)) {
        note(ctx, rotationNotice(ev, ctx.flags.verbose === true));
      } else if (ev.type === 'done') {
        completion = ev.completion;
        if (ev.replayed && ctx.flags.verbose) note(ctx, 'replayed the stored reply for this idempotency key');
      }
    }
  } catch (err) {
    // A reply cut short (Ctrl-C, a failure) ends its line, so the error starts on its own.
    if (printed && !printed.endsWith('\n')) ctx.io.stdout.write('\n');
    throw err;
  }
  return { completion, printed };
}

/** The finished reply: the rest of it (or JSON), its line ended, a notice when it was cut. */
function printCompletion(ctx: CliContext, completion: EntityCompletion, o: { json?: boolean; streaming: boolean; printed: string; started: number; maxTokens?: number }): void {
  const cut = cutNotice(completion, cutLimit(ctx, completion.model, o.maxTokens));
  if (o.json) {
    printJson(ctx.io, completion);
    if (cut) warn(ctx, cut);
    return;
  }
  const reply = sanitizeForTerminal(completion.choices[0]?.message.content ?? '');
  if (!o.streaming) ctx.io.stdout.write(reply);
  if (!(o.streaming ? o.printed : reply).endsWith('\n')) ctx.io.stdout.write('\n');
  if (cut) warn(ctx, cut);
  if (ctx.flags.verbose) {
    const recalled = recallNotice(completion.recalled);
    if (recalled) note(ctx, recalled);
    note(ctx, `${completion.id}: ${usageText(completion.usage)}, ${Math.round(performance.now() - o.started)} ms`);
  }
}
