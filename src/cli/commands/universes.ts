import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { colors, printJson, printTable, sanitizeForTerminal as safe } from '../output.js';

export function registerUniverses(program: Command, ctx: CliContext): void {
  const universes = examples(program.command('universes').description('universes: conversations frozen on a stored prompt'), [
    'mgpt universes create --prompt narrator --name "Tuesday campaign"',
    'mgpt universes list',
  ]);
  examples(
    universes
      .command('create')
      .description('create a universe from a stored prompt (the prompt is snapshotted; prints the id)')
      .requiredOption('--prompt <name>', 'stored prompt name')
      .option('--name <display>', 'display name')
      .option('--json', 'JSON output (the create response)'),
    ['mgpt universes create --prompt narrator', 'U=$(mgpt universes create --prompt narrator --name "Tuesday")'],
  ).action((o: { prompt: string; name?: string; json?: boolean }) => runUniversesCreate(ctx, o));
  examples(universes.command('list').alias('ls').description('list universes, most recently used first').option('--json', 'JSON output'), [
    'mgpt universes list --json',
  ]).action((o: { json?: boolean }) => runUniversesList(ctx, o));
  examples(
    universes
      .command('show')
      .description('show a universe and its conversation')
      .argument('<universe>', 'universe id, a unique id prefix (4+ characters) or its display name')
      .option('--doc', 'print the universe document (universeDoc shape, JSON), to feed back with respond --doc')
      .option('--json', 'JSON output'),
    ['mgpt universes show 3f0c...', 'mgpt universes show 3f0c... --doc > doc.json && mgpt respond --doc doc.json "look around"'],
  ).action((id: string, o: { doc?: boolean; json?: boolean }) => runUniversesShow(ctx, id, o));
}

export async function runUniversesCreate(ctx: CliContext, o: { prompt: string; name?: string; json?: boolean }): Promise<void> {
  const created = await (await ctx.backend()).createUniverse({ storedPrompt: o.prompt, ...(o.name !== undefined ? { displayName: o.name } : {}) });
  if (o.json) return printJson(ctx.io, created);
  ctx.io.stdout.write(created.universe + '\n');
  if (ctx.io.stderrIsTTY) ctx.io.stderr.write(`created universe ${created.universe} from prompt ${created.prompt.storedPrompt}\n`);
}

export async function runUniversesList(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const list = await (await ctx.admin('universes list')).listUniverses();
  if (o.json) return printJson(ctx.io, { object: 'list', data: list });
  printTable(
    ctx,
    [
      { header: 'ID', value: (u) => u.id, id: true },
      { header: 'NAME', value: (u) => u.displayName ?? '', max: 30 },
      { header: 'PROMPT', value: (u) => u.storedPrompt },
      { header: 'MESSAGES', value: (u) => String(u.messages), right: true },
      { header: 'UPDATED', value: (u) => u.updatedAt, time: true },
    ],
    list,
  );
}

export async function runUniversesShow(ctx: CliContext, ref: string, o: { doc?: boolean; json?: boolean }): Promise<void> {
  const backend = await ctx.backend();
  const id = await backend.resolveUniverse(ref);
  const admin = await ctx.admin('universes show');
  if (o.doc) return printJson(ctx.io, await admin.getUniverseDoc(id));
  const [summary, doc] = await Promise.all([admin.getUniverse(id), admin.getUniverseDoc(id)]);
  if (o.json) return printJson(ctx.io, { ...summary, conversation: doc.conversation });
  const c = colors(ctx);
  ctx.io.stdout.write(`${c.bold('universe')} ${summary.id}${summary.displayName ? ` (${safe(summary.displayName)})` : ''}\n`);
  ctx.io.stdout.write(`${c.bold('prompt')}   ${summary.storedPrompt} ${c.dim(doc.prompt?.fingerprint ?? '')}\n`);
  ctx.io.stdout.write(`${c.bold('messages')} ${summary.messages} runtime, ${doc.conversation.length} turns\n\n`);
  for (const t of doc.conversation) ctx.io.stdout.write(`${t.role === 'user' ? c.cyan('user') : c.green('assistant')} ${c.dim(safe(t.at ?? ''))}\n${safe(t.content)}\n\n`);
}
