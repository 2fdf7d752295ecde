import type { Command } from 'commander';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, type SearchHit } from '../../core/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import { timeAgo } from '../../ui/time-ago.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { intOption, sinceOption } from '../input.js';
import { colors, printJson, sanitizeForTerminal as safe } from '../output.js';

export interface SearchOptions {
  entity?: string[];
  role?: string;
  since?: string;
  limit?: string;
  json?: boolean;
}


export function registerSearch(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('search')
      .description("search every entity's full transcript, folded messages included; most relevant first")
      .argument('<query...>', 'words (all must match), "a phrase", or a prefix*')
      .option('--entity <entity>', 'only this entity (id, unique id prefix or name); repeatable', (v: string, acc: string[] = []) => [...acc, v])
      .option('--role <role>', 'only user or assistant messages')
      .option('--since <when>', 'only messages since an age (30m, 24h, 7d, 2w) or a date (2026-11-01)')
      .option('--limit <n>', `hits at most, 1-${SEARCH_LIMIT_MAX}`, String(SEARCH_LIMIT_DEFAULT))
      .option('--json', 'JSON output ({ object: "list", data: [{ entity_id, seq, role, created_at, snippet, highlights }] })'),
    [
      'mgpt search zanzibar42',
      'mgpt search "the secret word" --entity ada',
      'mgpt search deploy* --role user --since 7d',
      "mgpt search invoice --json | jq -r '.data[] | \"\\(.entity_id) \\(.seq)\"'",
    ],
  ).action((words: string[], o: SearchOptions) => runSearch(ctx, words.join(' '), o));
}

export async function runSearch(ctx: CliContext, q: string, o: SearchOptions): Promise<void> {
  if (o.role !== undefined && o.role !== 'user' && o.role !== 'assistant') throw new BadRequestError(`--role must be user or assistant, got ${JSON.stringify(o.role)}`);
  const limit = intOption('--limit', o.limit, 1, SEARCH_LIMIT_MAX);
  const since = sinceOption(o.since);
  const entity_ids = o.entity?.length ? await Promise.all(o.entity.map(async (ref) => (await resolveEntity(ctx, ref)).id)) : undefined;
  const list = await (await ctx.backend()).search({ q, entity_ids, role: o.role, since, limit });
  if (o.json) return printJson(ctx.io, list);
  if (list.data.length === 0) {
    if (ctx.io.stdoutIsTTY) ctx.io.stderr.write(`no messages match ${JSON.stringify(q)}\n`);
    return;
  }
  for (const hit of list.data) printHit(ctx, hit);
}

/** `ada #12 user · 3 days ago` then the snippet, its matches highlighted. */
function printHit(ctx: CliContext, h: SearchHit): void {
  const c = colors(ctx);
  const who = h.entity_name ? `${safe(h.entity_name)} ${c.dim(h.entity_id.slice(0, 8))}` : h.entity_id;
  const when = ctx.io.stdoutIsTTY ? timeAgo(h.created_at, Date.now()) : h.created_at;
  ctx.io.stdout.write(`${c.bold(who)} ${c.dim(`#${h.seq}`)} ${h.role === 'user' ? c.cyan('user') : c.green('assistant')} ${c.dim(`· ${when}`)}\n`);
  ctx.io.stdout.write(`  ${highlighted(h, c.yellow)}\n\n`);
}

/** The snippet with each match painted; the text between is cleaned for the terminal. */
function highlighted(h: SearchHit, paint: (s: string) => string): string {
  let out = '';
  let at = 0;
  for (const [s, e] of h.highlights) {
    out += safe(h.snippet.slice(at, s)) + paint(safe(h.snippet.slice(s, e)));
    at = e;
  }
  return out + safe(h.snippet.slice(at));
}
