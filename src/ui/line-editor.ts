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

/** Delete (and Ctrl-D on a non-empty line): the character under the cursor. */
export function deleteForward(s: EditorState): EditorState {
  if (s.cursor >= s.text.length) return s;
  return { ...s, text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1) };
}

function lineStartAt(text: string, cursor: number): number {
  return text.lastIndexOf('\n', cursor - 1) + 1;
}

function lineEndAt(text: string, cursor: number): number {
  const end = text.indexOf('\n', cursor);
  return end < 0 ? text.length : end;
}

/** Ctrl-A / Home: the start of the line the cursor is on. */
export function lineStart(s: EditorState): EditorState {
  return { ...s, cursor: lineStartAt(s.text, s.cursor) };
}

/** Ctrl-E / End: the end of the line the cursor is on. */
export function lineEnd(s: EditorState): EditorState {
  return { ...s, cursor: lineEndAt(s.text, s.cursor) };
}

const WORD = /[\p{L}\p{N}_]/u;

/** Where the word before `cursor` starts (readline's Alt-B: letters, digits and _ make words). */
function wordStartBefore(text: string, cursor: number, isWord: (ch: string) => boolean): number {
  let i = cursor;
  while (i > 0 && !isWord(text[i - 1])) i--;
  while (i > 0 && isWord(text[i - 1])) i--;
  return i;
}

/** Alt-B: back to the start of this (or the previous) word. */
export function wordBack(s: EditorState): EditorState {
  return { ...s, cursor: wordStartBefore(s.text, s.cursor, (ch) => WORD.test(ch)) };
}

/** Alt-F: forward to the end of this (or the next) word. */
export function wordForward(s: EditorState): EditorState {
  let i = s.cursor;
  while (i < s.text.length && !WORD.test(s.text[i])) i++;
  while (i < s.text.length && WORD.test(s.text[i])) i++;
  return { ...s, cursor: i };
}

/** Ctrl-W: deletes back to the previous whitespace, as readline's unix-word-rubout does. */
export function deleteWordBack(s: EditorState): EditorState {
  const from = wordStartBefore(s.text, s.cursor, (ch) => !/\s/.test(ch));
  return { ...s, text: s.text.slice(0, from) + s.text.slice(s.cursor), cursor: from };
}

/** Ctrl-U: deletes from the start of the line to the cursor. */
export function deleteToStart(s: EditorState): EditorState {
  const from = lineStartAt(s.text, s.cursor);
  return { ...s, text: s.text.slice(0, from) + s.text.slice(s.cursor), cursor: from };
}

/** Ctrl-K: deletes from the cursor to the end of the line. */
export function deleteToEnd(s: EditorState): EditorState {
  return { ...s, text: s.text.slice(0, s.cursor) + s.text.slice(lineEndAt(s.text, s.cursor)) };
}

/** Replaces the whole line (Tab completion), cursor at the end. */
export function setText(s: EditorState, text: string): EditorState {
  return { ...s, text, cursor: text.length };
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
