import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { ExportFormat } from '../../core/wire/entity-types.js';
import { BadRequestError, CancelledError, fromSystemError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { resolveEntity } from '../entity-ref.js';
import { examples } from '../help.js';
import { formatInt, printJson } from '../output.js';

export interface ExportOptions {
  output?: string;
  format?: string;
  force?: boolean;
  json?: boolean;
}

export function registerExport(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('export')
      .description('export an entity: tar (manifest.json, transcript.json, window.json, rotations.json, memory.json) or JSON')
      .argument('<entity>', 'entity id or exact name')
      .option('-o, --output <file>', 'FILE.tar or FILE.json; - or no -o writes to stdout (tar unless --format json), never tar to a terminal')
      .option('--format <format>', 'tar or json (default: from the file extension; tar on stdout)')
      .option('-f, --force', 'overwrite the output file if it exists')
      .option('--json', 'print a JSON summary of the export'),
    ['mgpt export ada -o ada.tar', 'mgpt export ada -o ada.json -f', 'mgpt export ada | tar -tf -', 'mgpt export ada --format json | jq .manifest'],
  ).action((ref: string, o: ExportOptions) => runExport(ctx, ref, o));
}

export function formatFor(file: string, explicit: string | undefined): ExportFormat {
  if (explicit !== undefined) {
    if (explicit !== 'tar' && explicit !== 'json') throw new BadRequestError(`--format must be tar or json, got ${JSON.stringify(explicit)}`);
    return explicit;
  }
  if (file === '-' || /\.tar$/i.test(file)) return 'tar';
  if (/\.json$/i.test(file)) return 'json';
  throw new BadRequestError(`cannot tell the format of ${JSON.stringify(file)}`, { hint: 'name it .tar or .json, or pass --format' });
}

/** An export never overwrites a file unless told to (as the REPL's `/export` without `-f`). */
async function refuseExisting(file: string, ref: string): Promise<void> {
  const found = await stat(file).then(
    () => true,
    () => false,
  );
  if (found) throw new BadRequestError(`${file} already exists`, { hint: `mgpt export ${ref} -o ${file} --force overwrites it` });
}

export async function runExport(ctx: CliContext, ref: string, opts: ExportOptions): Promise<void> {
  const o = { ...opts, output: opts.output ?? '-' };
  const format = formatFor(o.output, o.format);
  if (o.output === '-' && o.json) throw new BadRequestError('--json prints a summary on stdout; it cannot go with the archive on stdout', { hint: 'write the archive to a file: -o FILE' });
  if (o.output === '-' && format === 'tar' && ctx.io.stdoutIsTTY) {
    throw new BadRequestError('not writing a tar archive to a terminal', { hint: `write it to a file (mgpt export ${ref} -o ${ref}.tar) or pipe it` });
  }
  if (o.output !== '-' && !o.force) await refuseExisting(o.output, ref);
  const entity = await resolveEntity(ctx, ref);
  const body = (await ctx.backend()).exportEntity(entity.id, format);
  // Loaded here: a static import of node:crypto would cost every command ~2 ms at startup.
  const hash = (await import('node:crypto')).createHash('sha256');
  let bytes = 0;
  const progress = ctx.io.stderrIsTTY && o.output !== '-';
  if (o.output === '-') {
    for await (const piece of body) {
      hash.update(piece);
      bytes += piece.length;
      ctx.io.stdout.write(piece);
    }
  } else {
    // Written beside the target and renamed at the end, so a failure never leaves half a file.
    const tmp = join(dirname(o.output), `.${basename(o.output)}.${process.pid}.partial`);
    // Opened before anything streams, so a missing directory is a clear error, not an unhandled stream event.
    const out = (await open(tmp, 'w', 0o600).catch((err) => Promise.reject(fromSystemError(err, o.output)))).createWriteStream();
    const failed = new Promise<never>((_, reject) => out.once('error', (err) => reject(fromSystemError(err, o.output))));
    failed.catch(() => undefined);
    try {
      for await (const piece of body) {
        if (ctx.signal.aborted) throw new CancelledError('export cancelled; no file was written');
        hash.update(piece);
        bytes += piece.length;
        if (!out.write(piece)) await Promise.race([new Promise<void>((r) => out.once('drain', r)), failed]);
        if (progress) ctx.io.stderr.write(`\rexporting ${formatInt(bytes)} bytes`);
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(fromSystemError(err, o.output)) : resolve())));
      await rename(tmp, o.output).catch((err) => Promise.reject(fromSystemError(err, o.output)));
    } catch (err) {
      out.destroy();
      await rm(tmp, { force: true });
      throw err;
    } finally {
      if (progress) ctx.io.stderr.write('\r\x1b[K');
    }
  }
  const summary = { entity_id: entity.id, format, path: o.output, bytes, sha256: hash.digest('hex') };
  if (o.json) return printJson(ctx.io, summary);
  if (o.output !== '-') ctx.io.stderr.write(`exported ${entity.id} to ${o.output} (${format}, ${formatInt(bytes)} bytes)\n`);
}
