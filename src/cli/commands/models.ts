import type { Command } from 'commander';
import { KNOWN_MODELS } from '../../core/models.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson, printTable } from '../output.js';

export function registerModels(program: Command, ctx: CliContext): void {
  examples(
    program.command('models').description('list platform model ids and aliases with their provider routes').option('--json', 'JSON output'),
    ['mgpt models', 'MGPT_PROVIDER=openai MGPT_PROVIDER_URL=http://127.0.0.1:11434/v1 mgpt models --json'],
  ).action((o: { json?: boolean }) => runModels(ctx, o));
}

export function runModels(ctx: CliContext, o: { json?: boolean }): void {
  const s = ctx.settings();
  const rows = KNOWN_MODELS.map((m) => {
    const r = s.route(m.id);
    return { id: m.id, kind: m.kind, description: m.description, provider: r.provider, model: r.model ?? m.id, baseUrl: r.baseUrl ?? null };
  });
  if (o.json) {
    printJson(ctx.io, { object: 'list', data: rows });
    return;
  }
  printTable(
    ctx,
    [
      { header: 'ID', value: (r) => r.id },
      { header: 'KIND', value: (r) => r.kind },
      { header: 'PROVIDER', value: (r) => r.provider },
      { header: 'MODEL', value: (r) => r.model },
      { header: 'BASE URL', value: (r) => r.baseUrl ?? '-' },
    ],
    rows,
  );
}
