import { createWriteStream } from 'node:fs';
import { plural } from '../../core/text/numbers.js';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ChatImportOptions, ChatImportResult, ImportedConversation } from '../../core/wire/chat-import.js';
import { BadRequestError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { fileProblem } from '../input.js';
import { formatInt, printJson, printTable, sanitizeForTerminal as safe } from '../output.js';

/** What `mgpt import` was given: a path, or stdin (`-`) spooled to a temporary file so it can be read like one. */
export interface ImportFile {
  path: string;
  cleanup: () => Promise<void>;
}

export async function importFile(ctx: CliContext, file: string): Promise<ImportFile> {
  if (file !== '-') return { path: file, cleanup: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'mgpt-import-'));
  const path = join(dir, 'stdin');
  await pipeline(ctx.io.stdin, createWriteStream(path));
  return { path, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Whether the file is mgpt's own export (a tar, or JSON that opens with its manifest) rather than another tool's. */
export async function isMgptArchive(path: string): Promise<boolean> {
  let f;
  try {
    f = await open(path, 'r');
  } catch (err) {
    throw new BadRequestError(`cannot read ${path}: ${fileProblem(err)}`);
  }
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await f.read(head, 0, 512, 0);
    const text = head.subarray(0, bytesRead).toString('latin1');
    return text.slice(257, 262) === 'ustar' || /^\s*\{\s*"manifest"\s*:/.test(text);
  } finally {
    await f.close();
  }
}

/** Imports a chat export through the backend (local engine, or POST /v1/imports) and says what it made. */
export async function runChatImport(ctx: CliContext, path: string, opts: ChatImportOptions, json: boolean): Promise<void> {
  const backend = await ctx.backend();
  const tty = ctx.io.stderrIsTTY;
  let shown = 0;
  const res = await backend.importChats(path, opts, (p) => {
    if (!tty || performance.now() - shown < 100) return;
    shown = performance.now();
    ctx.io.stderr.write(`\r\x1b[2Kimporting: ${plural(p.conversations, 'conversation')}, ${plural(p.messages, 'message')}`);
  }, ctx.signal);
  if (tty && shown) ctx.io.stderr.write('\r\x1b[2K');
  if (json) return printJson(ctx.io, res);
  printTable(ctx, columns(res), res.conversations);
  if (res.conversations_omitted > 0) {
    ctx.io.stderr.write(`(${formatInt(res.conversations_omitted)} more conversations not listed: the report lists the first ${formatInt(res.conversations.length)}; the totals count them all)\n`);
  }
  ctx.io.stderr.write(summary(res) + '\n');
}

function columns(res: ChatImportResult) {
  const names = new Map(res.entities.map((e) => [e.id, e.name]));
  return [
    { header: 'OUTCOME', value: (c: ImportedConversation) => c.outcome },
    { header: 'CONVERSATION', value: (c: ImportedConversation) => c.title, max: 40 },
    { header: 'MESSAGES', value: (c: ImportedConversation) => String(c.messages), right: true },
    { header: 'TOKENS', value: (c: ImportedConversation) => String(c.tokens), right: true },
    { header: 'BRANCHES', value: (c: ImportedConversation) => String(c.branches_left_out), right: true },
    { header: 'ENTITY', value: (c: ImportedConversation) => (c.entity_id ? (names.get(c.entity_id) ?? c.entity_id) : ''), max: 40 },
    { header: 'NOTE', value: (c: ImportedConversation) => c.reason ?? '' },
  ];
}

function summary(res: ChatImportResult): string {
  const t = res.totals;
  const verb = res.dry_run ? 'would import' : 'imported';
  const parts = [
    `${verb} ${formatInt(t.imported)} of ${plural(t.conversations, 'conversation')} from ${res.source}: ${plural(t.messages, 'message')}, ${plural(t.tokens, 'token')}`,
    t.skipped ? `${formatInt(t.skipped)} skipped` : '',
    t.refused ? `${formatInt(t.refused)} refused for a message over 1 MiB (outcome refused)` : '',
    t.branches_left_out ? `${plural(t.branches_left_out, 'message')} on other branches left out` : '',
    res.dry_run ? 'nothing was written (--dry-run)' : '',
  ];
  return safe(parts.filter(Boolean).join('; '));
}
