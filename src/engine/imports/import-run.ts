import { type ChatImportOptions, type ChatImportProgress, type ChatImportResult, type ChatSource, type ImportedConversation } from '../../core/wire/chat-import.js';
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
  onProgress?: (p: ChatImportProgress) => void,
  signal?: AbortSignal,
): Promise<ChatImportResult> {
  const plan = checkImportOptions(opts);
  if (plan.summarize && !plan.dryRun) await requireSummaryFunds(deps, accountId);
  const opened = await openExport(path, plan.from);
  const tok = await loadTokenEstimator();
  const target = new ImportTarget(deps, tok, accountId, opened.source, plan, signal);
  const done: ImportedConversation[] = [];
  const progress = { conversations: 0, messages: 0, bytes: 0 };
  const note = (r: ImportedConversation, offset: number) => {
    done.push(r);
    progress.conversations++;
    progress.messages += r.messages;
    progress.bytes = offset;
    onProgress?.(progress);
  };
  try {
    if (plan.into !== undefined) await intoOne(target, plan, opened.conversations, note, deps.spoolDir);
    else for await (const c of opened.conversations) if (selected(c.conversation, plan)) note(await target.each(c), c.offset);
  } finally {
    await target.close();
  }
  return result(opened.source, plan, done, target);
}

/**
 * `--into`: every selected conversation in time order. Order needs them all first: they wait in a
 * temporary file (see ConversationSpool), so memory stays bounded whatever the export's size.
 */
async function intoOne(
  target: ImportTarget,
  plan: ImportPlan,
  conversations: AsyncIterable<ReadConversation>,
  note: (r: ImportedConversation, offset: number) => void,
  spoolDir: string,
): Promise<void> {
  const spool = await ConversationSpool.create(spoolDir);
  try {
    for await (const c of conversations) if (selected(c.conversation, plan)) await spool.add(c, startOf(c));
    await target.openInto(plan.into!);
    for await (const c of spool.ordered()) note(await target.each(c), c.offset);
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

function result(source: ChatSource, plan: ImportPlan, done: ImportedConversation[], target: ImportTarget): ChatImportResult {
  const imported = done.filter((c) => c.outcome !== 'skipped' && c.outcome !== 'unchanged');
  if (plan.only.size > 0 && done.length === 0) {
    throw new NotFoundError(`no conversation of the export has the id or title ${[...plan.only].map((x) => JSON.stringify(x)).join(', ')}`, {
      hint: 'list them with --dry-run',
    });
  }
  return {
    object: 'import',
    source,
    dry_run: plan.dryRun,
    entities: target.touched().map((row) => toEntity(row, true)),
    conversations: done,
    totals: {
      conversations: done.length,
      imported: imported.length,
      skipped: done.length - imported.length,
      messages: imported.reduce((n, c) => n + c.messages, 0),
      tokens: imported.reduce((n, c) => n + c.tokens, 0),
    },
  };
}
