import type { Command } from 'commander';
import { LIST_MESSAGES_MAX, type MessageList, type TranscriptMessage } from '../../core/wire/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { intOption } from '../input.js';
import { colors, printJson, sanitizeForTerminal as safe } from '../output.js';

export interface HistoryOptions {
  after?: string;
  limit?: string;
  last?: string;
  all?: boolean;
  json?: boolean;
}

export function registerHistory(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('history')
      .description("page through an entity's full transcript (every message, in or out of the window)")
      .argument('<entity>', 'entity id or exact name')
      .option('--after <seq>', 'messages with seq greater than this', '0')
      .option('--limit <n>', `messages per page, 1-${LIST_MESSAGES_MAX}`, '100')
      .option('--all', 'every message after --after, fetching all pages')
      .option('--last <n>', 'the newest n messages, oldest first (fetching as many pages as they take)')
      .option('--json', 'JSON output (the list object; with --all, all pages merged)'),
    ['mgpt history ada', 'mgpt history ada --after 200 --limit 50', 'mgpt history ada --last 20', 'mgpt history ada --all --json > transcript.json'],
  ).action((ref: string, o: HistoryOptions) => runHistory(ctx, ref, o));
}

export async function runHistory(ctx: CliContext, ref: string, o: HistoryOptions): Promise<void> {
  if (o.last !== undefined) return runLast(ctx, ref, o);
  const after = intOption('--after', o.after, 0) ?? 0;
  const limit = intOption('--limit', o.limit, 1, LIST_MESSAGES_MAX) ?? 100;
  if (o.all && o.limit !== '100' && o.limit !== undefined) throw new BadRequestError('--all fetches every page; drop --limit');
  const entity = await resolveEntity(ctx, ref);
  const backend = await ctx.backend();
  let page: MessageList = await backend.listMessages(entity.id, { after, limit: o.all ? LIST_MESSAGES_MAX : limit });
  if (!o.all) {
    if (o.json) return printJson(ctx.io, page);
    print(ctx, page.data);
    if (page.has_more && ctx.io.stdoutIsTTY) {
      ctx.io.stderr.write(`more: mgpt history ${ref} --after ${page.next_after}\n`);
    }
    return;
  }
  const all: TranscriptMessage[] = [];
  for (;;) {
    if (o.json) all.push(...page.data);
    else print(ctx, page.data);
    if (!page.has_more) break;
    page = await backend.listMessages(entity.id, { after: page.next_after, limit: LIST_MESSAGES_MAX });
  }
  if (o.json) {
    printJson(ctx.io, { object: 'list', entity_id: entity.id, data: all, has_more: false, next_after: page.next_after });
  }
}

/** --last N: start N messages before the end and read every page from there, as --all does. */
async function runLast(ctx: CliContext, ref: string, o: HistoryOptions): Promise<void> {
  const n = intOption('--last', o.last, 1) ?? 1;
  const clash = o.all ? '--all' : o.after !== '0' && o.after !== undefined ? '--after' : o.limit !== '100' && o.limit !== undefined ? '--limit' : undefined;
  if (clash) throw new BadRequestError(`--last picks its own start; drop ${clash}`);
  const entity = await resolveEntity(ctx, ref);
  const messages = (await (await ctx.backend()).getEntity(entity.id)).transcript.messages;
  return runHistory(ctx, ref, { ...o, last: undefined, all: true, after: String(Math.max(0, messages - n)), limit: undefined });
}

function print(ctx: CliContext, messages: TranscriptMessage[]): void {
  const c = colors(ctx);
  for (const m of messages) {
    const who = m.role === 'user' ? c.cyan('user') : c.green('assistant');
    ctx.io.stdout.write(`${c.dim(`#${m.seq}`)} ${who} ${c.dim(`${m.tokens} tok · ${safe(m.created_at)}`)}\n${safe(m.content)}\n\n`);
  }
}
