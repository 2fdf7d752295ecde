import { describe, expect, it } from 'vitest';
import {
  backspace,
  deleteForward,
  deleteToEnd,
  deleteToStart,
  deleteWordBack,
  down,
  emptyEditor,
  enter,
  insert,
  lineEnd,
  lineStart,
  moveCursor,
  up,
  wordBack,
  wordForward,
} from '../../src/ui/line-editor.js';

describe('line editor', () => {
  it('submits on enter and remembers the line; blank lines are not submitted', () => {
    const r = enter(insert(emptyEditor(), 'hello'));
    expect(r.submitted).toBe('hello');
    expect(r.state).toMatchObject({ text: '', cursor: 0, history: ['hello'] });
    expect(enter(insert(emptyEditor(), '   ')).submitted).toBeUndefined();
  });

  it('continues a line ending in a backslash, and keeps pasted line breaks', () => {
    const r = enter(insert(emptyEditor(), 'one\\'));
    expect(r.submitted).toBeUndefined();
    expect(r.state.text).toBe('one\n');
    expect(enter(insert(r.state, 'two')).submitted).toBe('one\ntwo');
    expect(insert(emptyEditor(), 'a\r\nb\rc').text).toBe('a\nb\nc');
  });

  it('browses history with up and down, keeping the draft', () => {
    let s = enter(insert(emptyEditor(), 'first')).state;
    s = enter(insert(s, 'second')).state;
    s = insert(s, 'draft');
    s = up(s);
    expect(s.text).toBe('second');
    s = up(s);
    expect(s.text).toBe('first');
    expect(up(s).text).toBe('first');
    s = down(down(s));
    expect(s.text).toBe('draft');
  });

  it('moves between lines of multi-line text before touching history', () => {
    let s = enter(insert(emptyEditor(), 'old')).state;
    s = insert(s, 'ab\ncd');
    s = up(s);
    expect(s).toMatchObject({ text: 'ab\ncd', cursor: 2 });
    s = down(s);
    expect(s.cursor).toBe(5);
    s = backspace(moveCursor(s, -1));
    expect(s).toMatchObject({ text: 'ab\nd', cursor: 3 });
  });

  it('moves to the start and end of the line the cursor is on (Ctrl-A/E, Home/End)', () => {
    const s = insert(emptyEditor(), 'one\ntwo three');
    expect(lineStart(s).cursor).toBe(4);
    expect(lineEnd(lineStart(s)).cursor).toBe(13);
    const top = { ...s, cursor: 1 };
    expect(lineStart(top).cursor).toBe(0);
    expect(lineEnd(top).cursor).toBe(3);
  });

  it('moves by words (Alt-B/F) over punctuation and spaces', () => {
    const s = insert(emptyEditor(), 'say hello, world');
    expect(wordBack(s).cursor).toBe(11);
    expect(wordBack(wordBack(s)).cursor).toBe(4);
    expect(wordBack({ ...s, cursor: 0 }).cursor).toBe(0);
    const start = { ...s, cursor: 0 };
    expect(wordForward(start).cursor).toBe(3);
    expect(wordForward(wordForward(start)).cursor).toBe(9);
    expect(wordForward(s).cursor).toBe(16);
  });

  it('deletes a word back (Ctrl-W), to the line start (Ctrl-U), to the line end (Ctrl-K) and forward (Delete)', () => {
    const s = insert(emptyEditor(), 'git commit -m  ');
    expect(deleteWordBack(s)).toMatchObject({ text: 'git commit ', cursor: 11 });
    expect(deleteWordBack({ ...s, cursor: 3 })).toMatchObject({ text: ' commit -m  ', cursor: 0 });
    const mid = { ...insert(emptyEditor(), 'ab\ncd ef'), cursor: 4 };
    expect(deleteToStart(mid)).toMatchObject({ text: 'ab\nd ef', cursor: 3 });
    expect(deleteToEnd(mid)).toMatchObject({ text: 'ab\nc', cursor: 4 });
    expect(deleteForward(mid)).toMatchObject({ text: 'ab\nc ef', cursor: 4 });
    expect(deleteForward({ ...mid, cursor: 8 }).text).toBe('ab\ncd ef');
  });
});
