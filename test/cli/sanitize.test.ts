import { describe, expect, it } from 'vitest';
import { sanitizeForTerminal } from '../../src/cli/output.js';

describe('sanitizeForTerminal', () => {
  it('removes escape sequences and control characters, keeping newlines and tabs', () => {
    const cases: Array<[string, string]> = [
      ['plain café 日本語 ✨', 'plain café 日本語 ✨'],
      ['a\x1b[1;31mred\x1b[0m', 'ared'],
      ['title\x1b]0;pwned\x07!', 'title!'],
      ['link \x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\', 'link click'],
      ['dcs\x1bPq#0;2;0;0;0\x1b\\done', 'dcsdone'],
      ['keypad\x1b=x\x1b(B', 'keypadx'],
      ['c1 \x9b2J \x85 csi', 'c1 2J  csi'],
      ['bell\x07 nul\x00 del\x7f cr\rback\bspace', 'bell nul del crbackspace'],
      ['two\nlines\tand a tab', 'two\nlines\tand a tab'],
      ['dangling \x1b', 'dangling '],
    ];
    for (const [input, out] of cases) expect(sanitizeForTerminal(input), JSON.stringify(input)).toBe(out);
  });
});
