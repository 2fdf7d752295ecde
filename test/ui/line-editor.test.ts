import { describe, expect, it } from 'vitest';
import { backspace, down, emptyEditor, enter, insert, moveCursor, up } from '../../src/ui/line-editor.js';

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
});
