import type { ChatSource } from '../../core/wire/chat-import.js';
import { type PlannedBlock, type RotationShares, planFoldToTarget, planRotation } from '../../core/window-plan.js';
import type { SourceMessage } from './conversation.js';

/** A transcript message an import writes (before seqs and token counts). */
export interface ShapedMessage {
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
}

export const SOURCE_NAMES: Record<ChatSource, string> = { chatgpt: 'ChatGPT', claude: 'Claude', openwebui: 'Open WebUI' };

/** What the assistant's side says where the export has no reply to the last user message. */
export const NO_REPLY = '[no reply in the export]';

export interface Segment {
  source: ChatSource;
  title: string;
  /** When the conversation (or, continued, its new part) began; a marker names the day. */
  startedAt: string;
  /** `always`: --into, every conversation opens with its marker; `needed`: only before an assistant-first part. */
  marker: 'always' | 'needed';
  /** Appended to a conversation imported before (--update). */
  continued: boolean;
}

/**
 * The transcript's alternation (user, assistant, user, ...) from a conversation's messages:
 * consecutive messages from one side are joined into one, a part that starts with the assistant
 * gets a marker from the user's side first, and one that ends with the user gets a note as reply.
 * Each message keeps the time of the first message it joined (or the conversation's).
 */
export function shapeTranscript(messages: readonly SourceMessage[], seg: Segment): ShapedMessage[] {
  const out: ShapedMessage[] = [];
  let time = seg.startedAt;
  for (const m of messages) {
    time = m.createdAt ?? time;
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content += '\n\n' + m.text;
    else out.push({ role: m.role, content: m.text, createdAt: time });
  }
  if (out.length === 0) return out;
  const mark = markerText(seg);
  if (out[0].role === 'assistant') out.unshift({ role: 'user', content: mark, createdAt: out[0].createdAt });
  else if (seg.marker === 'always') out[0].content = mark + '\n\n' + out[0].content;
  if (out[out.length - 1].role === 'user') out.push({ role: 'assistant', content: NO_REPLY, createdAt: out[out.length - 1].createdAt });
  return out;
}

/** `[Imported from ChatGPT: "Trip plan", 2024-03-01]`: the line that opens a conversation's part. */
export function markerText(seg: Segment): string {
  const verb = seg.continued ? 'Continued in' : 'Imported from';
  return `[${verb} ${SOURCE_NAMES[seg.source]}: ${JSON.stringify(seg.title)}, ${seg.startedAt.slice(0, 10)}]`;
}

/** What of the window to fold after an import: the oldest blocks, so the tail that fits stays live. */
export interface FoldPlan {
  take: number;
  covers: [number, number];
  maxSummaryTokens: number;
}

/**
 * The rotation's own plan over the window with the imported messages in it: nothing when it fits
 * the budget; else the oldest blocks are folded so the window, summary included, is at the
 * rotation target share (the tail stays live). `toTarget`: folded when over the target share,
 * whatever the budget (the fold that ends an import).
 */
export function planFold(blocks: readonly PlannedBlock[], budget: number, shares: RotationShares, toTarget = false): FoldPlan | null {
  const plan = toTarget ? planFoldToTarget(blocks, budget, shares) : planRotation(blocks, 0, budget, undefined, undefined, shares);
  return plan && { take: plan.take, covers: plan.covers, maxSummaryTokens: plan.maxSummaryTokens };
}

/** What an import's note says: the messages it folded, which of them it imported, and when they were written. */
export interface NoteFacts {
  source: ChatSource;
  /** The seqs folded out of the live window by this import. */
  folded: [number, number];
  /** The first of them the import brought (earlier ones were the entity's before it). */
  firstImported: number;
  /** When the first and last imported ones folded were written (ISO). */
  dates: [string, string];
}

const REACH = 'search (mgpt search, /search) and recall reach every word of them.';

/**
 * The summary block of an import that calls no model: it says plainly what is out of the live
 * window and where to find it, whole sentences only. The first form that fits `max` tokens:
 * an earlier summary the fold took in, then the note; then a short note; then the earlier
 * summary alone (the note left out). Nothing fits: empty (a summary block must still cover the span).
 */
export function importNoteText(f: NoteFacts, earlier: string | undefined, max: number, count: (text: string) => number): string {
  const [from, to] = f.dates.map((d) => d.slice(0, 10));
  const when = from === to ? `on ${from}` : `from ${from} to ${to}`;
  const imported = `${f.firstImported}-${f.folded[1]}`;
  const before = f.folded[0] < f.firstImported ? `${f.folded[0]}-${f.firstImported - 1}` : undefined;
  const full = before
    ? `Messages ${imported} of this transcript were imported from ${SOURCE_NAMES[f.source]} (written ${when}); they and messages ${before}, from before the import, are not in the live window. None of them were summarized: ${REACH}`
    : `Messages ${imported} of this transcript were imported from ${SOURCE_NAMES[f.source]} (written ${when}) and are not in the live window. They were not summarized: ${REACH}`;
  const short = `Messages ${f.folded[0]}-${f.folded[1]} are out of the live window; search and recall reach them.`;
  const forms = earlier ? [`${earlier}\n\n${full}`, `${earlier}\n\n${short}`, earlier] : [full, short];
  return forms.find((t) => count(t) <= max) ?? (earlier !== undefined && max > 0 ? earlier : '');
}
