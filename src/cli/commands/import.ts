import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { IMPORT_MAX_BYTES, importTooLarge } from '../../core/entity-types.js';
import { BadRequestError, MgptError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { fileProblem, readBounded } from '../input.js';
import { printJson, sanitizeForTerminal as safe } from '../output.js';
import { formatFor } from './export.js';

export interface ImportOptions {
  keepId?: boolean;
  name?: string;
  format?: string;
  json?: boolean;
}

export function registerImport(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('import')
      .description('recreate an exported entity in the local engine (sha256 values are verified)')
      .argument('<file>', 'FILE.tar or FILE.json from mgpt export; - reads stdin')
      .option('--keep-id', 'keep the original entity id instead of a new one')
      .option('--name <name>', "name the copy (default: the archive's name, numbered when taken: ada (2))")
      .option('--format <format>', 'tar or json (default: from the extension or the content)')
      .option('--json', 'print the imported entity as JSON'),
    ['mgpt import ada.tar', 'mgpt import ada.tar --name ada-copy', 'mgpt import ada.json --keep-id', 'mgpt export ada | mgpt import - --name ada-2'],
  ).action((file: string, o: ImportOptions) => runImport(ctx, file, o));
}

export async function runImport(ctx: CliContext, file: string, o: ImportOptions): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(file === '-' ? ctx.io.stdin : createReadStream(file), IMPORT_MAX_BYTES, importTooLarge);
  } catch (err) {
    if (err instanceof MgptError) throw err;
    throw new BadRequestError(`cannot read ${file}: ${fileProblem(err)}`);
  }
  const format =
    o.format !== undefined || /\.(tar|json)$/i.test(file) ? formatFor(file, o.format) : bytes[0] === 0x7b ? 'json' : 'tar';
  const { renamedFrom, ...entity } = await (await ctx.admin('import')).importEntity(bytes, format, { keepId: o.keepId, name: o.name });
  // Names are unique: a copy beside its original is numbered, and says so whatever the output.
  if (renamedFrom !== undefined) {
    ctx.io.stderr.write(`an entity named ${JSON.stringify(safe(renamedFrom))} exists: imported as ${JSON.stringify(safe(entity.name))} (--name sets another)\n`);
  }
  if (o.json) return printJson(ctx.io, entity);
  ctx.io.stdout.write(entity.id + '\n');
  if (ctx.io.stderrIsTTY) {
    ctx.io.stderr.write(`imported ${entity.name ? JSON.stringify(safe(entity.name)) + ' ' : ''}as ${entity.id} (${entity.transcript.messages} messages)\n`);
  }
}
