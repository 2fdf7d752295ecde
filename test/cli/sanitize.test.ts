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

describe('entities list on a terminal', () => {
  it('shows a hostile name without its escape sequences', async () => {
    const { Readable } = await import('node:stream');
    const { LocalBackend } = await import('../../src/backends/local.js');
    const { runList } = await import('../../src/cli/commands/entities/list.js');
    const { makeEngine } = await import('../helpers/engine.js');
    const { tempDir } = await import('../helpers/temp.js');
    const engine = makeEngine(tempDir());
    const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'x\x1b]0;pwned\x07\x1b[2Jy\x9b31m' }, 'local');
    let out = '';
    const backend = new LocalBackend(engine);
    const ctx = {
      io: { stdout: { write: (c: unknown) => ((out += String(c)), true) }, stderr: { write: () => true }, stdin: Readable.from([]), stdoutIsTTY: true, stderrIsTTY: true, stdinIsTTY: true },
      env: { NO_COLOR: '1' },
      backend: async () => backend,
    } as never;
    await runList(ctx, {});
    expect(out).toMatch(new RegExp(`^${e.id.slice(0, 8)}  xy31m +0 +0  active`, 'm'));
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    engine.close();
  });
});
