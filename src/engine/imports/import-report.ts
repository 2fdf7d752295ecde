import { type ChatImportTotals, IMPORT_REPORT_ROWS, type ImportedConversation } from '../../core/wire/chat-import.js';

/**
 * What an import tells about its conversations, in memory that does not grow with them: the
 * totals, and the first IMPORT_REPORT_ROWS rows. An export of two million conversations kept one
 * row each (3.6 GB) and answered them in one body; the rest are counted here, and a caller that
 * wants every row takes them as they are done (the progress handler, NDJSON over HTTP).
 */
export class ImportReport {
  readonly rows: ImportedConversation[] = [];
  readonly totals: ChatImportTotals = { conversations: 0, imported: 0, skipped: 0, refused: 0, messages: 0, tokens: 0, branches_left_out: 0 };

  constructor(private readonly maxRows = IMPORT_REPORT_ROWS) {}

  add(r: ImportedConversation): void {
    if (this.rows.length < this.maxRows) this.rows.push(r);
    const t = this.totals;
    t.conversations++;
    t.branches_left_out += r.branches_left_out;
    if (r.outcome === 'skipped' || r.outcome === 'unchanged' || r.outcome === 'refused') {
      t.skipped++;
      if (r.outcome === 'refused') t.refused++;
      return;
    }
    t.imported++;
    t.messages += r.messages;
    t.tokens += r.tokens;
  }

  /** Conversations done beyond the rows listed. */
  get omitted(): number {
    return this.totals.conversations - this.rows.length;
  }
}
