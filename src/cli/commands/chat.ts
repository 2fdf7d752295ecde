import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cutLimit } from '../cut-limit.js';
import { localRouteText, routeChange } from '../route-memory.js';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { dataDir } from '../../config/config.js';
import { ENTITY_MODEL } from '../../core/wire/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import type { Backend } from '../../core/backend.js';
import type { ToolDefinitionInput } from '../../core/wire/universe-types.js';
import { ChatController, type ChatOptions, type ChatTarget } from '../../ui/chat-controller.js';
import { HISTORY_MAX } from '../../ui/line-editor.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { readJsonFile, readTextInput } from '../input.js';
import { note } from '../output.js';
import { execTool } from '../tool-exec.js';

export interface ChatCommandOptions {
  new?: boolean;
  name?: string;
  instructions?: string;
  file?: string;
  model?: string;
  universe?: string;
  tools?: string;
  toolExec?: string;
  memoryTool?: boolean;
}

export function registerChat(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('chat')
      .description('talk to an entity (or a universe) interactively; with piped stdin, one message per line')
      .argument('[entity]', 'entity id or exact name (default: the most recently active one)')
      .option('--new', 'start a new entity')
      .option('--name <name>', 'name of the new entity')
      .option('--instructions <text>', 'instructions of the new entity')
      .option('-f, --file <file>', 'read the new entity\'s instructions from a file')
      .option('--model <id>', `entity model (default ${ENTITY_MODEL}) or universe model alias (default game-1-lite-frozen)`)
      .option('--universe <universe>', 'chat with a universe instead of an entity (id, id prefix or display name)')
      .option('--tools <file>', 'universe: JSON array of tool definitions')
      .option('--tool-exec <cmd>', 'universe: run each tool call (JSON in on stdin, JSON out); without it you are asked')
      .option('--memory-tool', "entity: every turn of this chat offers the model remember({label, text}), which sets a pinned memory block (see mgpt memory); default: the entity's setting")
      .option('--no-memory-tool', "entity: no turn of this chat offers remember, whatever the entity's setting"),
    [
      'mgpt chat',
      'mgpt chat ada',
      'mgpt chat ada --memory-tool',
      'mgpt chat --new --name tutor --instructions "You are a patient maths tutor."',
      'mgpt chat --universe $U --tools tools.json --tool-exec ./run-tool.sh',
      'printf "hello\\nwhat did I just say?\\n" | mgpt chat ada',
    ],
  ).action((ref: string | undefined, o: ChatCommandOptions) => runChat(ctx, ref, o));
}

export async function runChat(ctx: CliContext, ref: string | undefined, o: ChatCommandOptions): Promise<void> {
  if (o.universe && (ref || o.new)) throw new BadRequestError('--universe chats with a universe: give no entity and no --new');
  if (o.memoryTool !== undefined && o.universe) throw new BadRequestError('--memory-tool applies to entity chats, not --universe');
  if ((o.tools || o.toolExec) && !o.universe) throw new BadRequestError('--tools and --tool-exec apply to --universe chats');
  if (ref !== undefined && o.new) throw new BadRequestError('give an entity to resume or --new to start one, not both');
  if (!o.new && (o.name !== undefined || o.instructions !== undefined || o.file !== undefined)) {
    throw new BadRequestError('--name, --instructions and -f describe a new entity: add --new');
  }
  const tty = ctx.io.stdinIsTTY && ctx.io.stdoutIsTTY;
  // The screen's code (ink, react, yoga) loads while the backend opens and the entity resolves.
  const ui = tty ? import('../../ui/run-chat.js') : undefined;
  ui?.catch(() => {});
  const backend = await ctx.backend();
  const instructions =
    o.instructions === undefined && o.file === undefined ? undefined : await readTextInput(ctx, 'instructions', o.instructions, o.file);
  let target: ChatTarget;
  if (o.universe) {
    target = { kind: 'universe', id: await backend.resolveUniverse(o.universe) };
  } else if (o.new || (ref === undefined && (await backend.listEntities()).data.length === 0)) {
    if (!o.new && ctx.io.stderrIsTTY) note(ctx, 'no entity yet: starting a new one');
    const e = await backend.createEntity({ model: o.model ?? ENTITY_MODEL, name: o.name, instructions });
    target = { kind: 'entity', id: e.id };
  } else if (ref !== undefined) {
    target = { kind: 'entity', id: (await resolveEntity(ctx, ref)).id };
  } else {
    // The entity list is newest activity first.
    target = { kind: 'entity', id: (await backend.listEntities()).data[0].id };
  }
  // The engine's own reads (universes, the balance) exist only on the local backend.
  const admin = backend.kind === 'local' ? await ctx.admin('chat') : undefined;
  const opts: ChatOptions = {
    backend,
    admin,
    target,
    model: o.universe ? o.model : undefined,
    tools: o.tools ? await readTools(o.tools) : undefined,
    runTool: o.toolExec ? (call) => execTool(o.toolExec!, call) : undefined,
    instructions,
    memoryTool: o.memoryTool,
    home: ctx.env.HOME || undefined,
    humanTimes: tty,
    notices: await chatNotices(ctx, backend, target),
    cutLimit: (model) => cutLimit(ctx, model),
    route: (model) => localRouteText(ctx, model),
    balance: admin ? async () => (await admin.listAccounts()).find((a) => a.id === 'local' || a.name === 'local')?.balanceUsd ?? null : undefined,
  };
  if (ui) {
    const file = join(dataDir(ctx.env), 'chat-history.jsonl');
    const onStderr = ctx.notice;
    // While the REPL owns the terminal, a notice (a rate limit's wait) is one of its lines, not a stray write.
    const kept = await (await ui).runChat({ ...opts, history: readHistory(file), signal: ctx.signal, showNotices: (show) => (ctx.notice = show) }).finally(() => {
      ctx.notice = onStderr;
    });
    writeHistory(file, kept);
    if (ctx.signal.aborted) ctx.exitCode = 130;
    return;
  }
  ctx.exitCode = await lineMode(ctx, new ChatController(opts));
}

/** Earlier inputs, one JSON string a line (inputs may span lines); a damaged line is skipped. */
function readHistory(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === 'string') out.push(v);
    } catch {
      // the end of a file cut short, or not ours
    }
  }
  return out.slice(-HISTORY_MAX);
}

/** Kept private (mode 0600): the inputs are conversation text. Written whole, then renamed. */
function writeHistory(file: string, history: string[]): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, history.slice(-HISTORY_MAX).map((h) => JSON.stringify(h)).join('\n') + '\n', { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Input history is a convenience: failing to keep it must not fail the chat.
  }
}

async function readTools(file: string): Promise<ToolDefinitionInput[]> {
  return (await readJsonFile(file, '--tools')) as ToolDefinitionInput[];
}

/**
 * Without a terminal: one message (or slash command) a line from stdin, each reply printed as it
 * streams; notices and errors on stderr. A failed line does not stop the rest; the exit code is
 * the last failure's.
 */
async function lineMode(ctx: CliContext, chat: ChatController): Promise<number> {
  let shown = 0;
  let streamed = 0;
  let exitCode = 0;
  chat.subscribe(() => {
    const s = chat.getState();
    if (s.streaming !== null && s.streaming.length > streamed) {
      ctx.io.stdout.write(s.streaming.slice(streamed));
      streamed = s.streaming.length;
    }
    for (; shown < s.items.length; shown++) {
      const item = s.items[shown];
      // A reply cut off (an error, a cancel) still ends its line, so the next reply starts on its own.
      if (s.streaming === null && streamed > 0 && item.kind !== 'assistant') {
        ctx.io.stdout.write('\n');
        streamed = 0;
      }
      if (item.kind === 'assistant') {
        const rest = item.text.slice(streamed);
        ctx.io.stdout.write(rest + (item.text.endsWith('\n') ? '' : '\n'));
      } else if (item.kind === 'output') {
        ctx.io.stdout.write(item.text + '\n');
      } else if (item.kind === 'error') {
        exitCode = item.exitCode ?? 1;
        ctx.io.stderr.write(`error: ${item.text}\n${item.hint ? `hint: ${item.hint}\n` : ''}`);
      } else if (item.kind === 'notice' && (shown > 0 || ctx.flags.verbose)) {
        ctx.io.stderr.write(`${item.text}\n`);
      }
      if (item.kind !== 'user' && item.kind !== 'notice') streamed = 0;
    }
  });
  const onAbort = () => chat.cancel();
  ctx.signal.addEventListener('abort', onAbort);
  try {
    await chat.start();
    const { createInterface } = await import('node:readline');
    const lines = createInterface({ input: ctx.io.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      if (ctx.signal.aborted || chat.getState().exited) break;
      if (!line.trim()) continue;
      await chat.submit(line);
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  return ctx.signal.aborted ? 130 : exitCode;
}

/** Said under the greeting: no model configured (echo answers), or another route than last time answers the entity. */
async function chatNotices(ctx: CliContext, backend: Backend, target: ChatTarget): Promise<string[]> {
  if (backend.kind !== 'local' || target.kind !== 'entity') return [];
  const notices = ctx.settings().usesDefaultEcho(ENTITY_MODEL)
    ? ['no model is configured: replies come from the built-in echo provider (mgpt config set models.mgpt-1-27b.baseUrl URL)']
    : [];
  const changed = await routeChange(ctx, await backend.getEntity(target.id));
  return changed ? [...notices, `warning: ${changed}`] : notices;
}
