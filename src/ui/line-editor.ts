/**
 * The REPL's input line: multi-line text with a cursor and input history, as pure state
 * transitions (the ink component only maps keys to these).
 */
export interface EditorState {
  text: string;
  /** Cursor offset into `text`. */
  cursor: number;
  /** Earlier inputs, oldest first. */
  history: string[];
  /** Index into history while browsing it; history.length when editing a new line. */
  browsing: number;
  /** The unsent line kept while browsing history. */
  draft: string;
}

export const HISTORY_MAX = 500;

export function emptyEditor(history: string[] = []): EditorState {
  return { text: '', cursor: 0, history, browsing: history.length, draft: '' };
}

export function insert(s: EditorState, chunk: string): EditorState {
  // Pasted text keeps its line breaks; a lone CR from a paste is a line break too.
  const clean = chunk.replace(/\r\n?/g, '\n');
  return { ...s, text: s.text.slice(0, s.cursor) + clean + s.text.slice(s.cursor), cursor: s.cursor + clean.length };
}

export function backspace(s: EditorState): EditorState {
  if (s.cursor === 0) return s;
  return { ...s, text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 };
}

export function moveCursor(s: EditorState, delta: number): EditorState {
  return { ...s, cursor: Math.min(s.text.length, Math.max(0, s.cursor + delta)) };
}

/** Up: the previous history entry, or the line above within multi-line text. */
export function up(s: EditorState): EditorState {
  const lineStart = s.text.lastIndexOf('\n', s.cursor - 1);
  if (lineStart >= 0) {
    const prevStart = s.text.lastIndexOf('\n', lineStart - 1) + 1;
    const column = s.cursor - lineStart - 1;
    return { ...s, cursor: Math.min(prevStart + column, lineStart) };
  }
  if (s.browsing === 0) return s;
  const browsing = s.browsing - 1;
  const text = s.history[browsing];
  return { ...s, browsing, text, cursor: text.length, draft: s.browsing === s.history.length ? s.text : s.draft };
}

/** Down: the line below within multi-line text, or the next history entry (then the draft). */
export function down(s: EditorState): EditorState {
  const lineEnd = s.text.indexOf('\n', s.cursor);
  if (lineEnd >= 0) {
    const lineStart = s.text.lastIndexOf('\n', s.cursor - 1) + 1;
    const nextEnd = s.text.indexOf('\n', lineEnd + 1);
    const column = s.cursor - lineStart;
    return { ...s, cursor: Math.min(lineEnd + 1 + column, nextEnd < 0 ? s.text.length : nextEnd) };
  }
  if (s.browsing >= s.history.length) return s;
  const browsing = s.browsing + 1;
  const text = browsing === s.history.length ? s.draft : s.history[browsing];
  return { ...s, browsing, text, cursor: text.length };
}

/**
 * Enter. A line ending in a backslash continues on the next line (the backslash is dropped);
 * otherwise the text is submitted and remembered.
 */
export function enter(s: EditorState): { state: EditorState; submitted?: string } {
  if (s.cursor === s.text.length && s.text.endsWith('\\')) {
    const text = s.text.slice(0, -1) + '\n';
    return { state: { ...s, text, cursor: text.length } };
  }
  const submitted = s.text;
  if (!submitted.trim()) return { state: { ...s, text: '', cursor: 0 } };
  const history = s.history.at(-1) === submitted ? s.history : [...s.history, submitted].slice(-HISTORY_MAX);
  return { state: emptyEditor(history), submitted };
}

export function clear(s: EditorState): EditorState {
  return { ...s, text: '', cursor: 0, browsing: s.history.length, draft: '' };
}
