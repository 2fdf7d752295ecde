/** A conversation of another tool's export, read into one shape whatever the tool (see the format readers). */
export interface SourceMessage {
  /** The tool's id of the message (a ChatGPT node, a Claude message uuid, an Open WebUI message id). */
  id: string;
  role: 'user' | 'assistant';
  text: string;
  /** ISO 8601, or null when the export has no time for it. */
  createdAt: string | null;
}

export interface SourceConversation {
  id: string;
  title: string;
  createdAt: string | null;
  updatedAt: string | null;
  /** The path the user last saw, from the first message, without hidden and empty ones. */
  messages: SourceMessage[];
  /** Messages on other branches (edits, regenerations), left out. */
  branchesLeftOut: number;
  /** Why nothing of it may be imported (a message over the size cap); its messages are then dropped. */
  refused?: string;
}

export function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function str(x: unknown): string | undefined {
  return typeof x === 'string' ? x : undefined;
}

/** An epoch time in seconds (ChatGPT's and Open WebUI's) as ISO 8601. */
export function fromEpochSeconds(x: unknown): string | null {
  return typeof x === 'number' && Number.isFinite(x) && x > 0 ? new Date(Math.round(x * 1000)).toISOString() : null;
}

/** An ISO time as the export wrote it, normalized; null when absent or unreadable. */
export function fromIso(x: unknown): string | null {
  if (typeof x !== 'string') return null;
  const t = Date.parse(x);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** `[file: report.pdf, 48,213 bytes]`: what an attachment becomes in the transcript. */
export function fileNote(kind: string, name: string | undefined, size: unknown): string {
  const sized = typeof size === 'number' && Number.isFinite(size) ? `, ${Math.round(size).toLocaleString('en-US')} bytes` : '';
  return name === undefined && !sized ? `[${kind}]` : `[${kind}: ${name ?? 'unnamed'}${sized}]`;
}

/** A tool's output shortened to a note: the transcript keeps the conversation, not the tool's pages. */
export function shortNote(kind: string, text: string, max = 200): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return `[${kind}: ${one.length > max ? one.slice(0, max) + '…' : one}]`;
}

/**
 * The path from the root to `leaf` through `parentOf`; ids seen twice (a loop in a damaged export)
 * end it. Nodes on no path to the leaf are the branches left out.
 */
export function pathTo(leaf: string | undefined, parentOf: (id: string) => string | null | undefined): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  for (let id: string | null | undefined = leaf; id && !seen.has(id); id = parentOf(id)) {
    seen.add(id);
    path.push(id);
  }
  return path.reverse();
}
