import { createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Hono, type Context } from 'hono';
import { IMPORT_FIELDS, IMPORT_NDJSON, type ChatImportOptions, type ChatImportProgressHandler, importOptionsFrom } from '../../core/wire/chat-import.js';
import { ndjsonLines } from './import-ndjson.js';
import { BadRequestError, CancelledError, MgptError, PayloadTooLargeError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { ImportedEntity } from '../../core/backend.js';
import { type ExportFormat, IMPORT_MAX_BYTES, importTooLarge } from '../../core/wire/entity-types.js';
import { makeSpool } from '../../engine/support/spool-folder.js';
import type { Env, RouteDeps } from '../route-deps.js';

/** The largest export a raw body may carry; it goes to a temporary file, never into memory. */
export const IMPORT_BODY_MAX = 8 * 1024 * 1024 * 1024;
/** A multipart form is read whole by the framework: larger exports go as a raw body. */
export const IMPORT_FORM_MAX = 64 * 1024 * 1024;

/**
 * `POST /v1/imports` (an extension): another tool's chat export becomes entities of the
 * key's account. The export is the raw body (any type but multipart; streamed to a file in the spool folder)
 * or the `file` field of a multipart form; the options are query parameters or form fields. The
 * answer is the report (the totals and the first conversations), or with `Accept:
 * application/x-ndjson` a line per conversation as it is done, then the report (docs/importing.md).
 */
export function importRoutes(engine: Engine, { auth, limit, onUnexpectedError }: RouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  // Counted in the key's requests per minute, as a search is (--summarize may call the model).
  app.post('/v1/imports', auth('mgpt.responses:create'), limit, async (c) => {
    if (c.req.query('from') === 'mgpt') return c.json(await importArchive(engine, c), 201);
    // In the engine's spool folder: what a killed server leaves there, its next start removes.
    const dir = await makeSpool(engine.deps.spoolDir);
    const cleanup = () => rm(dir, { recursive: true, force: true });
    let streaming = false;
    try {
      const file = join(dir, 'export');
      const multipart = /^multipart\/form-data/i.test(c.req.header('content-type') ?? '');
      const opts = multipart ? await fromForm(c, file) : await fromRaw(c, file);
      const run = (onProgress?: ChatImportProgressHandler) => engine.importChats(file, opts, c.get('principal').accountId, onProgress, c.get('signal'));
      if (!wantsNdjson(c)) return c.json(await run(), 200);
      // From here the stream removes the upload when the import ends.
      streaming = true;
      return c.body(await ndjsonLines(run, cleanup, onUnexpectedError), 200, { 'Content-Type': `${IMPORT_NDJSON}; charset=utf-8` });
    } finally {
      if (!streaming) await cleanup();
    }
  });
  return app;
}

function wantsNdjson(c: Context<Env>): boolean {
  return (c.req.header('accept') ?? '').toLowerCase().includes(IMPORT_NDJSON);
}

/** The query of an mgpt archive's import: what `mgpt import FILE` takes for one. */
const ARCHIVE_FIELDS = ['from', 'format', 'keep_id', 'name', 'unique_name'];

/**
 * mgpt's own archive (`?from=mgpt`, tar or JSON as `mgpt export` writes it), which the engine checks
 * as it does a local import: read whole, up to the size an export can be.
 */
async function importArchive(engine: Engine, c: Context<Env>): Promise<ImportedEntity> {
  for (const name of Object.keys(c.req.queries())) {
    if (!ARCHIVE_FIELDS.includes(name)) throw new BadRequestError(`unknown import option ${JSON.stringify(name)} for an mgpt archive`, { hint: `the options are ${ARCHIVE_FIELDS.join(', ')}` });
  }
  if (Number(c.req.header('content-length') ?? 0) > IMPORT_MAX_BYTES) throw importTooLarge();
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.length > IMPORT_MAX_BYTES) throw importTooLarge();
  if (bytes.length === 0) throw new BadRequestError('the request body is empty: send the archive as the body', { hint: 'curl --data-binary @ada.tar' });
  const format = archiveFormat(c.req.query('format'), c.req.header('content-type'), bytes);
  const flag = (n: string) => ['true', '1', ''].includes(c.req.query(n) ?? 'false');
  const opts = { keepId: flag('keep_id'), uniqueName: flag('unique_name'), ...(c.req.query('name') === undefined ? {} : { name: c.req.query('name') }) };
  return engine.entities.import(bytes, format, opts, c.get('principal').accountId);
}

/** `format`, else the Content-Type (mgpt's archive type, JSON), else the first byte (`{` is JSON). */
function archiveFormat(format: string | undefined, type: string | undefined, bytes: Uint8Array): ExportFormat {
  if (format === 'tar' || format === 'json') return format;
  if (format !== undefined) throw new BadRequestError(`format must be tar or json, got ${JSON.stringify(format)}`);
  if (/application\/x-svc-entity/i.test(type ?? '')) return 'tar';
  if (/json/i.test(type ?? '')) return 'json';
  return bytes[0] === 0x7b ? 'json' : 'tar';
}

function queryOptions(c: Context<Env>, extra: Record<string, string[]> = {}): ChatImportOptions {
  const query = c.req.queries();
  for (const name of [...Object.keys(query), ...Object.keys(extra)]) {
    if (!(IMPORT_FIELDS as readonly string[]).includes(name)) {
      throw new BadRequestError(`unknown import option ${JSON.stringify(name)}`, { hint: `the options are ${IMPORT_FIELDS.join(', ')}` });
    }
  }
  return importOptionsFrom((n) => [...(query[n] ?? []), ...(extra[n] ?? [])]);
}

async function fromRaw(c: Context<Env>, file: string): Promise<ChatImportOptions> {
  const opts = queryOptions(c);
  if (Number(c.req.header('content-length') ?? 0) > IMPORT_BODY_MAX) throw tooLarge(IMPORT_BODY_MAX);
  const incoming = c.env?.incoming;
  const body: AsyncIterable<Uint8Array> | null = incoming ?? (c.req.raw.body ? Readable.fromWeb(c.req.raw.body as never) : null);
  if (!body) throw new BadRequestError('the request has no body: send the export file as the body', { hint: 'curl --data-binary @conversations.json' });
  let size = 0;
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Uint8Array>) {
        for await (const part of source) {
          size += part.length;
          if (size > IMPORT_BODY_MAX) throw tooLarge(IMPORT_BODY_MAX);
          yield part;
        }
      },
      createWriteStream(file),
    );
  } catch (err) {
    if (err instanceof MgptError) throw err;
    throw new CancelledError('the client closed the connection during the upload');
  }
  if (size === 0) throw new BadRequestError('the request body is empty: send the export file as the body');
  return opts;
}

async function fromForm(c: Context<Env>, file: string): Promise<ChatImportOptions> {
  // The form is read whole: its cap holds only with a length stated up front (a chunked one has none).
  const length = c.req.header('content-length');
  if (length === undefined) {
    throw new BadRequestError('a multipart form needs a Content-Length header (this one was sent chunked): send the export as the raw body instead, which may be chunked', {
      hint: 'curl --data-binary @conversations.json',
    });
  }
  if (Number(length) > IMPORT_FORM_MAX) throw tooLarge(IMPORT_FORM_MAX, 'send a larger export as the raw body');
  const form = await c.req.formData();
  const part = form.get('file');
  if (!part || typeof part === 'string') throw new BadRequestError('the form has no file field', { hint: 'curl -F file=@conversations.json' });
  const fields: Record<string, string[]> = {};
  for (const [name, value] of form.entries()) if (name !== 'file' && typeof value === 'string') (fields[name] ??= []).push(value);
  const opts = queryOptions(c, fields);
  await writeFile(file, new Uint8Array(await part.arrayBuffer()));
  return opts;
}

function tooLarge(limit: number, hint?: string): PayloadTooLargeError {
  return new PayloadTooLargeError(`the export is over ${limit} bytes`, hint ? { hint } : undefined);
}
