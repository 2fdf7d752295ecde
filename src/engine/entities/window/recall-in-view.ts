import type { RecalledLine } from '../../../core/wire/entity-types.js';
import { loadTokenEstimator } from '../../../core/text/tokens.js';
import type { ChatMessage } from '../../../providers/spec.js';
import type { EngineDeps } from '../../deps.js';
import { recallSeqs, recallSpans, recalledLine } from './text-refs.js';

/** What a request carries of recalled transcript lines: their tokens (the preambles too), and each line. */
export interface RecallInView {
  tokens: number;
  lines: RecalledLine[];
}

/**
 * The recalled lines `messages` carry, read from the messages themselves (wherever the request
 * puts them, and in the bytes it sends), so what `mgpt window` reports is what the provider gets.
 */
export async function recallInView(deps: Pick<EngineDeps, 'store'>, entityId: string, messages: readonly ChatMessage[]): Promise<RecallInView> {
  const texts = messages.map((m) => (typeof m.content === 'string' ? m.content : ''));
  const seqs = [...new Set(texts.flatMap(recallSeqs))];
  if (!seqs.length) return { tokens: 0, lines: [] };
  const sources = new Map((await deps.store.entities.messagesAt(entityId, seqs)).map((r) => [r.seq, r]));
  const tok = await loadTokenEstimator();
  const out: RecallInView = { tokens: 0, lines: [] };
  for (const text of texts) {
    for (const span of recallSpans(text, sources)) {
      out.tokens += tok.count(text.slice(span.start, span.end));
      for (const { row, chars } of span.lines) {
        // Counted as recall counts a line (retrieve.ts): a whole one as its head and its message's stored count, a cut one whole; and the line break before it.
        const whole = chars === row.content.length;
        const tokens = (whole ? tok.count(recalledLine(row, 0)) + row.tokens : tok.count(recalledLine(row, chars))) + 1;
        out.lines.push({ seq: row.seq, role: row.role, tokens, content: row.content.slice(0, chars) });
      }
    }
  }
  return out;
}
