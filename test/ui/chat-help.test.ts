import { describe, expect, it } from 'vitest';
import { HELP } from '../../src/ui/chat-commands.js';

describe('/help (issue 37, item 10)', () => {
  it('lines every command description up in one column', () => {
    const commands = HELP.split('\n').filter((l) => l.startsWith('/'));
    expect(commands.length).toBeGreaterThan(5);
    const columns = new Set(commands.map((l) => l.search(/ {2,}\S/) + l.match(/ {2,}/)![0].length));
    expect(columns.size).toBe(1);
  });
});
