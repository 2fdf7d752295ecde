import type { Command } from 'commander';
import { LIST_ENTITIES_MAX, type EntityList } from '../../../core/wire/entity-types.js';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { intOption } from '../../input.js';
import { formatInt, note, printJson, printTable } from '../../output.js';

export interface ListOptions {
  json?: boolean;
  limit?: string;
  all?: boolean;
}

/** Pages read for --all: each is one query. */
const PAGE = 500;

export function registerList(entities: Command, ctx: CliContext): void {
  examples(
    entities
      .command('list')
      .alias('ls')
      .description(`list entities, most recently active first (the newest ${LIST_ENTITIES_MAX} unless --limit or --all)`)
      .option('-L, --limit <n>', `how many (default ${LIST_ENTITIES_MAX}; the remote wire returns at most ${LIST_ENTITIES_MAX})`)
      .option('--all', 'every entity (local backend)')
      .option('--json', 'JSON output'),
    ['mgpt entities list', 'mgpt entities list --limit 10', "mgpt entities list --all --json | jq -r '.data[].id'"],
  ).action((o: ListOptions) => runList(ctx, o));
}

export async function runList(ctx: CliContext, o: ListOptions): Promise<void> {
  const limit = intOption('--limit', o.limit, 1);
  const list = await readList(ctx, o.all ? Infinity : (limit ?? LIST_ENTITIES_MAX));
  // After `mgpt login` the local database's entities drop out of view: say where they went.
  if (list.data.length === 0 && (await ctx.backend()).kind === 'remote') {
    note(ctx, `no entities on ${ctx.settings().entitiesUrl ?? ctx.settings().baseUrl ?? 'the server'}; your local ones are still in the local database: \`mgpt --backend local entities list\` shows them (\`mgpt logout\` goes back to it)`);
  }
  if (o.json) return printJson(ctx.io, list);
  if (list.data.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.io.stderr.write('no entities yet: create one with `mgpt entities create --name NAME`\n');
    return;
  }
  printTable(
    ctx,
    [
      // A terminal gets short ids, which work as input; scripts get the whole id (printTable's id column).
      { header: 'ID', value: (e) => e.id, id: true },
      { header: 'NAME', value: (e) => e.name, max: 30 },
      { header: 'MESSAGES', value: (e) => formatInt(e.transcript.messages), right: true },
      { header: 'TOKENS', value: (e) => formatInt(e.transcript.tokens), right: true },
      { header: 'STATE', value: (e) => (e.read_only ? 'read-only' : 'active') },
      { header: 'UPDATED', value: (e) => e.updated_at, time: true },
    ],
    list.data,
  );
}

/** Up to `want` entities, a page at a time; the remote wire has one page of at most 200. */
async function readList(ctx: CliContext, want: number): Promise<EntityList> {
  const backend = await ctx.backend();
  if (backend.kind === 'remote') {
    const list = await backend.listEntities();
    if (want > LIST_ENTITIES_MAX && list.data.length === LIST_ENTITIES_MAX) {
      note(ctx, `the server lists at most ${LIST_ENTITIES_MAX} entities (the wire contract's cap); older ones resolve by full id`);
    }
    return { ...list, data: list.data.slice(0, want) };
  }
  const data: EntityList['data'] = [];
  while (data.length < want) {
    const size = Math.min(PAGE, want - data.length);
    const page = (await backend.listEntities({ limit: size, offset: data.length })).data;
    data.push(...page);
    if (page.length < size) break;
  }
  return { object: 'list', data };
}
