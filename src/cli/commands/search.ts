import type { Command } from 'commander';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, type SearchHit, type SearchInput, type SearchSource } from '../../core/wire/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import { timeAgo } from '../../ui/time-ago.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { intOption, sinceOption } from '../input.js';
import { colors, printJson, sanitizeForTerminal as safe } from '../output.js';

export interface SearchOptions {
  entity?: string[];
  universe?: string[];
  universes?: boolean;
  logs?: boolean;
  role?: string;
  since?: string;
  limit?: string;
  any?: boolean;
  json?: boolean;
}


export function registerSearch(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('search')
      .description("search every entity's full transcript (folded messages included), universe conversations or generation logs; most relevant first")
      .argument('<query...>', 'words (all must match), "a phrase", or a prefix*; with --any, words any of which may match')
      .option('--entity <entity>', 'only this entity (id, unique id prefix or name); repeatable', (v: string, acc: string[] = []) => [...acc, v])
      .option('--universe <universe>', 'search this universe\'s conversation instead (id, unique id prefix or display name); repeatable', (v: string, acc: string[] = []) => [...acc, v])
      .option('--universes', 'search every universe conversation instead of entity transcripts')
      .option('--logs', 'search generation logs (what each request asked and answered) instead')
      .option('--role <role>', 'only user or assistant messages (universes: also tool)')
      .option('--since <when>', 'only messages since an age (30m, 24h, 7d, 2w) or a date (2026-11-01)')
      .option('--limit <n>', `hits at most, 1-${SEARCH_LIMIT_MAX}`, String(SEARCH_LIMIT_DEFAULT))
      .option('--any', 'any word, by its stem (teach finds teaching), ranked by relevance; entity transcripts only')
      .option('--json', 'JSON output ({ object: "list", data: [{ entity_id, seq, role, created_at, snippet, highlights }] })'),
    [
      'mgpt search zanzibar42',
      'mgpt search "the secret word" --entity ada',
      'mgpt search deploy* --role user --since 7d',
      'mgpt search --any where does my sister teach',
      'mgpt search dragon --universes',
      'mgpt search dragon --logs',
      "mgpt search invoice --json | jq -r '.data[] | \"\\(.entity_id) \\(.seq)\"'",
    ],
  ).action((words: string[], o: SearchOptions) => runSearch(ctx, words.join(' '), o));
}

export async function runSearch(ctx: CliContext, q: string, o: SearchOptions): Promise<void> {
  const source = sourceOf(o);
  if (o.role !== undefined && o.role !== 'user' && o.role !== 'assistant' && o.role !== 'tool') throw new BadRequestError(`--role must be user, assistant or tool, got ${JSON.stringify(o.role)}`);
  const limit = intOption('--limit', o.limit, 1, SEARCH_LIMIT_MAX);
  const since = sinceOption(o.since);
  const backend = await ctx.backend();
  const entity_ids = o.entity?.length ? await Promise.all(o.entity.map(async (ref) => (await resolveEntity(ctx, ref)).id)) : undefined;
  const universe_ids = o.universe?.length ? await Promise.all(o.universe.map((ref) => backend.resolveUniverse(ref))) : undefined;
  const mode = o.any ? ('any' as const) : undefined;
  const list = await backend.search({ q, source, entity_ids, universe_ids, role: o.role as SearchInput['role'], since, limit, mode });
  // No hits is exit 1, as grep: a script tells "nothing found" from "found" (and from an error, 2+).
  if (list.data.length === 0) {
    ctx.exitCode = 1;
    ctx.io.stderr.write(`no matches for ${JSON.stringify(q)}\n`);
  }
  if (o.json) return printJson(ctx.io, list);
  for (const hit of list.data) printHit(ctx, hit);
}

/** Which source the flags ask for; one at a time. */
function sourceOf(o: SearchOptions): SearchSource | undefined {
  const universes = Boolean(o.universe?.length || o.universes);
  if (universes && o.logs) throw new BadRequestError('search universes or logs, not both at once');
  if ((universes || o.logs) && o.entity?.length) throw new BadRequestError('--entity searches entity transcripts; drop it to search universes or logs');
  return universes ? 'universes' : o.logs ? 'logs' : undefined;
}

/** `ada 1b2c3d4e #12 user · 3 days ago` (a universe's likewise; a log: `log 1b2c3d4e`) then the snippet, its matches highlighted. */
function printHit(ctx: CliContext, h: SearchHit): void {
  const c = colors(ctx);
  const id = h.entity_id ?? h.universe_id ?? '';
  const name = h.entity_name ?? h.universe_name;
  const who = h.log_id ? `log ${h.log_id.slice(0, 8)}` : name ? `${safe(name)} ${c.dim(id.slice(0, 8))}` : id;
  const when = ctx.io.stdoutIsTTY ? timeAgo(h.created_at, Date.now()) : h.created_at;
  const role = h.role === undefined ? '' : ` ${h.role === 'user' ? c.cyan('user') : c.green(h.role)}`;
  const seq = h.seq === undefined ? '' : ` ${c.dim(`#${h.seq}`)}`;
  ctx.io.stdout.write(`${c.bold(who)}${seq}${role} ${c.dim(`· ${when}`)}\n`);
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
