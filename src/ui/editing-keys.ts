import type { Key } from 'ink';
import {
  type EditorState,
  backspace,
  deleteForward,
  deleteToEnd,
  deleteToStart,
  deleteWordBack,
  down,
  lineEnd,
  lineStart,
  moveCursor,
  up,
  wordBack,
  wordForward,
} from './line-editor.js';

/** The Delete key's sequences (ESC [3~ and its modified forms); 0x7f is Backspace. */
const DELETE_KEY = /^\x1b\[3[~$^;]/;

/**
 * The readline keys of the input line: the next editor state, or undefined when the key is not an
 * editing key. `raw` is the key's byte sequence, which tells Delete from Backspace.
 */
export function editingKey(s: EditorState, input: string, key: Key, raw: string): EditorState | undefined {
  if (key.delete && DELETE_KEY.test(raw)) return deleteForward(s);
  if ((key.backspace || key.delete) && key.meta) return deleteWordBack(s);
  if (key.backspace || key.delete) return backspace(s);
  if (key.upArrow) return up(s);
  if (key.downArrow) return down(s);
  if (key.leftArrow) return key.meta || key.ctrl ? wordBack(s) : moveCursor(s, -1);
  if (key.rightArrow) return key.meta || key.ctrl ? wordForward(s) : moveCursor(s, 1);
  if (key.home) return lineStart(s);
  if (key.end) return lineEnd(s);
  if (key.ctrl) {
    switch (input) {
      case 'a':
        return lineStart(s);
      case 'e':
        return lineEnd(s);
      case 'b':
        return moveCursor(s, -1);
      case 'f':
        return moveCursor(s, 1);
      case 'w':
        return deleteWordBack(s);
      case 'u':
        return deleteToStart(s);
      case 'k':
        return deleteToEnd(s);
    }
    return undefined;
  }
  if (key.meta && input === 'b') return wordBack(s);
  if (key.meta && input === 'f') return wordForward(s);
  return undefined;
}
