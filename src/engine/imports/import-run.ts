import { type ChatImportOptions, type ChatImportProgressHandler, type ChatImportResult, type ChatSource, type ImportedConversation } from '../../core/wire/chat-import.js';
import { NotFoundError } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { EngineDeps } from '../deps.js';
import { isMetered, requireFunds } from '../platform/billing.js';
import { toEntity } from '../entities/entity-wire.js';
import type { SourceConversation } from './conversation.js';
import { ImportTarget } from './import-target.js';
import { type ImportPlan, checkImportOptions } from './options.js';
import { type ReadConversation, openExport } from './read-export.js';
import { ConversationSpool } from './spool.js';
import { ImportReport } from './import-report.js';
import { nextMacrotask } from '../../core/lane.js';

/**
 * Imports another tool's export at `path` into the account: one entity per conversation, or all
 * of them into one (`into`, in time order). Each conversation is one transaction: a failure names
 * it and leaves the others as they are. Conversations imported before are skipped (by their id),
 * or, with `update`, get what they gained since.
 */
export async function importChats(
  deps: EngineDeps,
  path: string,
  opts: ChatImportOptions,
  accountId: string,
  onProgress?: ChatImportProgressHandler,
  signal?: AbortSignal,
): Promise<ChatImportResult> {
  const plan = checkImportOptions(opts);
  if (plan.summarize && !plan.dryRun) await requireSummaryFunds(deps, accountId);
  const opened = await openExport(path, plan.from, deps.limits.importMaxConversations);
  const report = new ImportReport();
  let target: ImportTarget | undefined;
  try {
    target = new ImportTarget(deps, await loadTokenEstimator(), accountId, opened.source, plan, signal);
    const note = noter(report, onProgress);
    if (plan.into !== undefined) await intoOne(target, plan, opened.conversations, note, deps.spoolDir);
    else for await (const c of opened.conversations) if (selected(c.conversation, plan)) await note(await target.each(c), c.offset);
  } finally {
    await target?.close();
    await opened.close();
  }
  return result(opened.source, plan, report, target, deps.limits.recallTokens);
}

type Note = (r: ImportedConversation, offset: number) => Promise<void>;

/**
 * Counts each conversation done into the report and tells the caller; every few milliseconds it
 * lets the event loop turn, so a server importing two million small conversations answers its
 * other requests meanwhile (a chunk of the file holds thousands).
 */
function noter(report: ImportReport, onProgress: ChatImportProgressHandler | undefined): Note {
  const progress = { conversations: 0, messages: 0, bytes: 0 };
  let turned = performance.now();
  return async (r, offset) => {
    report.add(r);
    progress.conversations++;
    progress.messages += r.messages;
    progress.bytes = offset;
    await onProgress?.({ ...progress, last: r });
    if (performance.now() - turned < TURN_MS) return;
    await nextMacrotask();
    turned = performance.now();
  };
}

/** The longest the import loop holds the event loop between two turns of it. */
const TURN_MS = 20;

/**
 * `--into`: every selected conversation in time order. Order needs them all first: they wait in a
 * temporary file (see ConversationSpool), so memory stays bounded whatever the export's size.
 */
async function intoOne(target: ImportTarget, plan: ImportPlan, conversations: AsyncIterable<ReadConversation>, note: Note, spoolDir: string): Promise<void> {
  const spool = await ConversationSpool.create(spoolDir);
  try {
    for await (const c of conversations) if (selected(c.conversation, plan)) await spool.add(c, startOf(c));
    await target.openInto(plan.into!);
    await target.checkRoom(spool.ordered());
    for await (const c of spool.ordered()) await note(await target.each(c), c.offset);
    await target.finish();
  } finally {
    await spool.close();
  }
}

/** `summarize` calls the model: a metered account with nothing left is refused before anything is read, as a turn is. */
async function requireSummaryFunds(deps: EngineDeps, accountId: string): Promise<void> {
  const account = await deps.store.accounts.get(accountId);
  if (isMetered(account)) requireFunds(account, 0, 'an import with --summarize');
}

function startOf(c: ReadConversation): number {
  const t = c.conversation.createdAt ?? c.conversation.messages[0]?.createdAt ?? c.conversation.updatedAt;
  return t ? Date.parse(t) : 0;
}

function selected(c: SourceConversation, plan: ImportPlan): boolean {
  if (plan.only.size > 0 && !plan.only.has(c.id) && !plan.only.has(c.title)) return false;
  if (plan.since !== undefined) {
    const t = c.updatedAt ?? c.createdAt;
    if (t !== null && Date.parse(t) < plan.since) return false;
  }
  return true;
}

function result(source: ChatSource, plan: ImportPlan, report: ImportReport, target: ImportTarget | undefined, recallTokens: number): ChatImportResult {
  if (plan.only.size > 0 && report.totals.conversations === 0) {
    throw new NotFoundError(`no conversation of the export has the id or title ${[...plan.only].map((x) => JSON.stringify(x)).join(', ')}`, {
      hint: 'list them with --dry-run',
    });
  }
  const touched = target?.touched() ?? { rows: [], omitted: 0 };
  return {
    object: 'import',
    source,
    dry_run: plan.dryRun,
    entities: touched.rows.map((row) => toEntity(row, true, recallTokens)),
    entities_omitted: touched.omitted,
    conversations: report.rows,
    conversations_omitted: report.omitted,
    totals: report.totals,
  };
}
