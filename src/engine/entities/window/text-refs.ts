import type { ChatMessage } from '../../../providers/spec.js';
import type { MessageRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import { RECALL_PREAMBLE, SYSTEM_RECALL_PREAMBLE } from './recall-block.js';

/**
 * Prompt messages after the window (a recall message: transcript lines, some cut) as the history
 * stores them: each text as literal pieces and references to a prefix of a transcript message
 * ([seq, length]), so the same text is not stored twice. Decoding joins the pieces again, so the
 * message comes back byte for byte whatever its format.
 */
export type TextPiece = string | [number, number];

/** A message whose text is kept as pieces (`r` its role); any other message is kept as it was. */
interface PiecedMessage {
  r: string;
  p: TextPiece[];
}

/**
 * A recall message, kept smaller still: PREAMBLES[k], then for each [seq, n] a new line, the
 * message's lineHead and the first n characters of its text (a bare seq: all of it). Used only when it gives back the
 * text exactly (checked when it is written).
 */
interface RecallMessage {
  r: string;
  /** PREAMBLES' index, then each line: a seq (the whole message) or [seq, n]. */
  q: [number, ...RecallLine[]];
}

type RecallLine = number | [number, number];

/**
 * Texts a recall message starts with, as mgpt has written them: append only (a record names one
 * by its index forever). test/engine/window-history.test.ts checks today's preamble is here.
 */
export const PREAMBLES: readonly string[] = [SYSTEM_RECALL_PREAMBLE, RECALL_PREAMBLE];

/** A recalled line's head, as mgpt has written it: never change it (records rely on it), add another form instead. */
function lineHead(m: MessageRow): string {
  return `\n#${m.seq} ${m.role} (${m.createdAt.slice(0, 16).replace('T', ' ')}): `;
}

/** A reference is worth it from this many characters on. */
const MIN_SHARED = 24;

/** `messages` with the texts that quote the transcript messages `sources` stored by reference. */
export function encodeTail(messages: ChatMessage[], sources: Map<number, MessageRow>): unknown[] {
  return messages.map((m) => {
    const keys = Object.keys(m);
    if (keys.length !== 2 || typeof m.content !== 'string' || !keys.includes('role')) return m;
    const recall = recallForm(m.content, sources);
    if (recall && recallText(recall.q, sources) === m.content) return { r: m.role, q: recall.q } satisfies RecallMessage;
    return { r: m.role, p: pieces(m.content, sources) } satisfies PiecedMessage;
  });
}

/** A run of recalled lines in a prompt's text: where it starts and ends, and each line's seq and characters of its message. */
export interface RecallSpan {
  start: number;
  end: number;
  lines: Array<{ row: MessageRow; chars: number }>;
}

/**
 * Every recall in `text`, wherever in it (a message of its own, or a part of another): a preamble
 * mgpt has written, then the lines that follow it as recall writes them, each checked against its
 * transcript message in `sources` (so where one ends is known, whatever follows it).
 */
export function recallSpans(text: string, sources: Map<number, MessageRow>): RecallSpan[] {
  const spans: RecallSpan[] = [];
  for (const preamble of PREAMBLES) {
    for (let start = text.indexOf(preamble); start >= 0; start = text.indexOf(preamble, start + 1)) {
      let pos = start + preamble.length;
      const lines: RecallSpan['lines'] = [];
      for (;;) {
        const row = sources.get(Number(/^\n#(\d+) /.exec(text.slice(pos, pos + 24))?.[1]));
        if (!row || !text.startsWith(lineHead(row), pos)) break;
        pos += lineHead(row).length;
        let n = 0;
        while (n < row.content.length && text[pos + n] === row.content[n]) n++;
        lines.push({ row, chars: n });
        pos += n;
        // A line cut by the budget may end in a character cut in two (decoded as U+FFFD): it is the line's too.
        const next = text.indexOf('\n', pos);
        if (n < row.content.length && next > pos && next - pos <= CUT_TAIL_CHARS) pos = next;
      }
      if (lines.length) spans.push({ start, end: pos, lines });
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

/** One recalled line as the prompt carries it: its head, then the first `chars` characters of its message. */
export function recalledLine(row: MessageRow, chars: number): string {
  return lineHead(row).slice(1) + row.content.slice(0, chars);
}

/** The most characters a cut line's end can hold past its message's text (a character cut in two). */
const CUT_TAIL_CHARS = 4;

/** The seqs the lines after a recall preamble in `text` name (their messages are read to check them). */
export function recallSeqs(text: string): number[] {
  if (!PREAMBLES.some((p) => text.includes(p))) return [];
  return [...text.matchAll(/\n#(\d+) (?:user|assistant) \(/g)].map((m) => Number(m[1]));
}

/** The text as a preamble and recalled lines, when it reads as one. */
function recallForm(text: string, sources: Map<number, MessageRow>): Pick<RecallMessage, 'q'> | undefined {
  const k = PREAMBLES.findIndex((p) => text.startsWith(p));
  if (k < 0) return undefined;
  const q: RecallMessage['q'] = [k];
  let pos = PREAMBLES[k].length;
  while (pos < text.length) {
    const row = sources.get(Number(/^\n#(\d+) /.exec(text.slice(pos, pos + 24))?.[1]));
    if (!row || !text.startsWith(lineHead(row), pos)) return undefined;
    pos += lineHead(row).length;
    let n = 0;
    while (n < row.content.length && text[pos + n] === row.content[n]) n++;
    q.push(n === row.content.length ? row.seq : [row.seq, n]);
    pos += n;
  }
  return { q };
}

function recallText(q: RecallMessage['q'], rows: Map<number, MessageRow>): string {
  const [k, ...lines] = q;
  return PREAMBLES[k] + lines.map((line) => {
    const [seq, n] = typeof line === 'number' ? [line, Infinity] : line;
    const row = rows.get(seq);
    return row ? lineHead(row) + row.content.slice(0, n) : '';
  }).join('');
}

function pieces(text: string, sources: Map<number, MessageRow>): TextPiece[] {
  const out: TextPiece[] = [];
  let pos = 0;
  for (const [seq, { content }] of [...sources].sort((a, b) => a[0] - b[0])) {
    if (content.length < MIN_SHARED) continue;
    const at = text.indexOf(content.slice(0, MIN_SHARED), pos);
    if (at < 0) continue;
    let n = MIN_SHARED;
    while (n < content.length && text[at + n] === content[n]) n++;
    if (at > pos) out.push(text.slice(pos, at));
    out.push([seq, n]);
    pos = at + n;
  }
  if (pos < text.length || !out.length) out.push(text.slice(pos));
  return out;
}

/** The seqs a stored tail refers to. */
function referenced(tail: unknown[]): number[] {
  const seqs = new Set<number>();
  for (const m of tail) {
    if (isPieced(m)) for (const p of m.p) if (Array.isArray(p)) seqs.add(p[0]);
    if (isRecall(m)) for (const line of m.q.slice(1) as RecallLine[]) seqs.add(typeof line === 'number' ? line : line[0]);
  }
  return [...seqs];
}

/** A stored tail as the prompt sent it. */
export async function decodeTail(deps: EngineDeps, entityId: string, tail: unknown[]): Promise<ChatMessage[]> {
  const seqs = referenced(tail);
  const rows = seqs.length ? await deps.store.entities.messagesAt(entityId, seqs) : [];
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  return tail.map((m) => {
    if (isRecall(m)) return { role: m.r, content: recallText(m.q, bySeq) } as ChatMessage;
    if (!isPieced(m)) return m as ChatMessage;
    const content = m.p.map((p) => (typeof p === 'string' ? p : (bySeq.get(p[0])?.content ?? '').slice(0, p[1]))).join('');
    return { role: m.r, content } as ChatMessage;
  });
}

function isPieced(m: unknown): m is PiecedMessage {
  return typeof m === 'object' && m !== null && 'r' in m && 'p' in m && !('role' in m);
}

function isRecall(m: unknown): m is RecallMessage {
  return typeof m === 'object' && m !== null && 'r' in m && 'q' in m && !('role' in m);
}
