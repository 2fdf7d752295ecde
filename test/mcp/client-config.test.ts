import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { printConfig } from '../../src/mcp/client-config.js';

describe('mgpt mcp --print-config', () => {
  it("quotes a command a shell reads back word for word (spaces, quotes, $ in the paths)", () => {
    const command = "/Applications/My Tools/node's $HOME";
    const args = ['/opt/mgpt dir/bin/mgpt', '--db', '/tmp/a b/"x".db', 'mcp'];
    const { text } = printConfig({ client: 'claude-code', command, args });
    const words = text.trim().split(' -- ')[1]!;
    const read = execFileSync('sh', ['-c', `for w in ${words}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' }).split('\0').slice(0, -1);
    expect(read).toEqual([command, ...args]);
  });

  it('puts the key in no file that can read it from the environment, and refuses what it cannot print', () => {
    expect(printConfig({ client: 'cursor', command: 'node', args: [], url: 'https://h/mcp' }).text).toContain('Bearer ${env:MGPT_API_KEY}');
    expect(printConfig({ client: 'claude-code', command: 'node', args: [], url: 'https://h/mcp' }).text).toContain('"Authorization: Bearer $MGPT_API_KEY"');
    expect(() => printConfig({ client: 'claude-desktop', command: 'node', args: [], url: 'https://h/mcp' })).toThrow(/set MGPT_API_KEY/);
    expect(() => printConfig({ client: 'vim', command: 'node', args: [] })).toThrow(/takes claude-code, claude-desktop, cursor/);
    expect(() => printConfig({ client: 'cursor', command: 'node', args: [], url: 'https://h/v1' })).toThrow(/\/mcp/);
  });
});
