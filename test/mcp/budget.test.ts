import { describe, expect, it } from 'vitest';
import { fitLines } from '../../src/mcp/budget.js';
import { cursorInt, makeCursor, readCursor } from '../../src/mcp/cursor.js';
import { parsePath } from '../../src/mcp/memory-paths.js';
import { BadRequestError } from '../../src/core/errors.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';

describe('fitLines: a page of lines within max_tokens', () => {
  it('never goes over the budget and takes lines in order, whatever the lines and the budget', async () => {
    const tok = await loadTokenEstimator();
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const words = ['alpha', 'β-beta', '東京', '\n', '  ', '🙂', 'x'.repeat(40), '#12', 'user:'];
    for (let run = 0; run < 200; run++) {
      const lines = Array.from({ length: Math.floor(rnd() * 60) }, () => Array.from({ length: 1 + Math.floor(rnd() * 80) }, () => words[Math.floor(rnd() * words.length)]).join(' '));
      const max = 100 + Math.floor(rnd() * 900);
      const f = await fitLines('head line', lines, max, (taken) => (taken < lines.length ? `[more: cursor "${'c'.repeat(40)}${taken}"]` : ''));
      expect(f.tokens).toBe(tok.count(f.text));
      expect(f.tokens).toBeLessThanOrEqual(max);
      if (lines.length) expect(f.taken).toBeGreaterThan(0);
      if (!f.cut) for (const l of lines.slice(0, f.taken)) expect(f.text).toContain(l);
    }
  });

  it('cuts a first line longer than the whole budget, marks it, and moves the page on', async () => {
    const f = await fitLines('#1 …', ['word '.repeat(5000), 'next'], 100, (taken) => `[more from ${taken}]`);
    expect(f).toMatchObject({ taken: 1, cut: true });
    expect(f.text).toMatch(/ \[cut\]\n\[more from 1\]$/);
    expect(f.tokens).toBeLessThanOrEqual(100);
  });
});

describe('cursors and memory paths', () => {
  it('a cursor is refused by another tool, and damaged fields are refused', () => {
    const c = makeCursor('search', { q: 'x', at: 10 });
    expect(cursorInt('search', readCursor('search', c), 'at')).toBe(10);
    expect(() => readCursor('read_window', c)).toThrow(/is not one read_window gave/);
    expect(() => readCursor('search', '%%%')).toThrow(BadRequestError);
    expect(() => readCursor('search', Buffer.from('[1,2]').toString('base64url'))).toThrow(/is not one search gave/);
    expect(() => cursorInt('search', readCursor('search', makeCursor('search', { at: 'ten' })), 'at')).toThrow(/damaged/);
  });

  it('parses /memories paths and refuses anything outside or odd', () => {
    expect(parsePath('path', '/memories')).toEqual({ kind: 'root' });
    expect(parsePath('path', '/memories/')).toEqual({ kind: 'root' });
    expect(parsePath('path', '/memories/ada')).toEqual({ kind: 'entity', entity: 'ada' });
    expect(parsePath('path', '/memories/ada/user.prefs')).toEqual({ kind: 'block', entity: 'ada', label: 'user.prefs' });
    for (const bad of ['/memoriesx', 'memories/ada', '/etc/passwd', '/memories/ada/../b', '/memories//x', '/memories/a/b/c']) {
      expect(() => parsePath('path', bad), bad).toThrow(BadRequestError);
    }
  });
});
