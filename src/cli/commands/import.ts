import { createReadStream } from 'node:fs';
import { plural } from '../../core/text/numbers.js';
import type { Command } from 'commander';
import { IMPORT_MAX_BYTES, importTooLarge } from '../../core/wire/entity-types.js';
import type { ChatImportOptions } from '../../core/wire/chat-import.js';
import { BadRequestError, MgptError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { fileProblem, readBounded } from '../input.js';
import { printJson, sanitizeForTerminal as safe } from '../output.js';
import { formatFor } from './export.js';
import { importFile, isMgptArchive, runChatImport } from './import-chats.js';

/** The command's flags: an archive's (`--keep-id`, `--name`, `--format`) and a chat export's, as the engine takes them. */
export interface ImportOptions extends Omit<ChatImportOptions, 'from'> {
  keepId?: boolean;
  name?: string;
  format?: string;
  json?: boolean;
  /** Checked against FROM below: a chat source, `mgpt` or `auto`. */
  from?: string;
}

/** The flags that belong to one kind of file only: mgpt's own archives, or another tool's chat export. */
const ARCHIVE_FLAGS = ['keepId', 'name', 'format'] as const;
const CHAT_FLAGS = ['into', 'only', 'since', 'dryRun', 'update', 'summarize'] as const;
const FROM = ['auto', 'mgpt', 'chatgpt', 'claude', 'openwebui'];

export function registerImport(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('import')
      .description(
        "recreate an exported entity (mgpt's own archive, sha256 values verified), or turn a " +
          'ChatGPT, Claude or Open WebUI export into entities (see docs/importing.md)',
      )
      .argument('<file>', 'mgpt export (FILE.tar, FILE.json), or conversations.json / the ChatGPT .zip / chat-export-*.json; - reads stdin')
      .option('--from <tool>', `what made the file: ${FROM.join(', ')}`, 'auto')
      .option('--keep-id', 'mgpt archive: keep the original entity id instead of a new one')
      .option('--name <name>', "mgpt archive: name the copy (default: the archive's name, numbered when taken: ada (2))")
      .option('--format <format>', 'mgpt archive: tar or json (default: from the extension or the content)')
      .option('--into <entity>', 'chat export: every conversation into this one entity (made if none has the name), in time order')
      .option('--only <id-or-title>', 'chat export: only this conversation (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .option('--since <date>', 'chat export: only conversations updated on or after this date (2024-03-01)')
      .option('--dry-run', 'chat export: list what would be made, with message and token counts; write nothing')
      .option('--update', 'chat export: append what conversations imported before gained since (they are skipped otherwise)')
      .option('--summarize', "chat export: the entity's model summarizes what does not fit the window (default: a plain note, no model call)")
      .option('--json', 'print the imported entity (or the import report) as JSON'),
    [
      'mgpt import ada.tar',
      'mgpt import ada.tar --name ada-copy',
      'mgpt export ada | mgpt import - --name ada-2',
      'mgpt import chatgpt-export.zip --dry-run',
      'mgpt import conversations.json --from claude',
      'mgpt import conversations.json --into history --since 2024-01-01',
      'mgpt import chat-export-1714550400.json --update',
    ],
  ).action((file: string, o: ImportOptions) => runImportAny(ctx, file, o));
}

/** `mgpt import FILE`: mgpt's own archive or another tool's chat export, told apart by --from or the file itself. */
export async function runImportAny(ctx: CliContext, file: string, o: ImportOptions): Promise<void> {
  const from = o.from ?? 'auto';
  if (!FROM.includes(from)) throw new BadRequestError(`--from ${JSON.stringify(from)} is not one of ${FROM.join(', ')}`);
  const input = await importFile(ctx, file);
  try {
    const archive = from === 'mgpt' || (from === 'auto' && (/\.tar$/i.test(file) || (await isMgptArchive(input.path))));
    refuseFlags(o, archive ? CHAT_FLAGS : ARCHIVE_FLAGS, archive ? "an mgpt archive" : 'a chat export');
    if (archive) return await runImport(ctx, input.path, o);
    const opts = { from: from as 'auto', into: o.into, only: o.only, since: o.since, dryRun: o.dryRun, update: o.update, summarize: o.summarize };
    await runChatImport(ctx, input.path, opts, o.json === true);
  } finally {
    await input.cleanup();
  }
}

function refuseFlags(o: ImportOptions, flags: readonly (keyof ImportOptions)[], what: string): void {
  const given = flags.filter((f) => o[f] !== undefined);
  if (given.length === 0) return;
  const flag = '--' + String(given[0]).replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  throw new BadRequestError(`${flag} does not apply to ${what}`, { hint: 'mgpt import --help lists which flags go with which file' });
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
  const { renamedFrom, ...entity } = await (await ctx.backend()).importArchive(bytes, format, { keepId: o.keepId, name: o.name });
  // Names are unique: a copy beside its original is numbered, and says so whatever the output.
  if (renamedFrom !== undefined) {
    ctx.io.stderr.write(`an entity named ${JSON.stringify(safe(renamedFrom))} exists: imported as ${JSON.stringify(safe(entity.name))} (--name sets another)\n`);
  }
  if (o.json) return printJson(ctx.io, entity);
  ctx.io.stdout.write(entity.id + '\n');
  if (ctx.io.stderrIsTTY) {
    ctx.io.stderr.write(`imported ${entity.name ? JSON.stringify(safe(entity.name)) + ' ' : ''}as ${entity.id} (${plural(entity.transcript.messages, 'message')})\n`);
  }
}
