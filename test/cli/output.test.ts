import { describe, expect, it } from 'vitest';
import { printTable, relativeTime } from '../../src/cli/output.js';
import { testContext } from '../helpers/cli-context.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const engine = makeEngine(tempDir());
const rows = [
  { id: '0123abcd', name: 'a rather long entity name that would wrap a narrow terminal', tokens: '12,345', at: new Date(Date.now() - 180_000).toISOString() },
  { id: '4567ef01', name: 'bob', tokens: '7', at: '2020-01-02T03:04:05.000Z' },
];
const columns = [
  { header: 'ID', value: (r: (typeof rows)[0]) => r.id },
  { header: 'NAME', value: (r: (typeof rows)[0]) => r.name },
  { header: 'TOKENS', value: (r: (typeof rows)[0]) => r.tokens, right: true },
  { header: 'UPDATED', value: (r: (typeof rows)[0]) => r.at, time: true },
];

describe('tables', () => {
  it('fit the terminal: the text column gives way, numbers and times keep their width', () => {
    const ctx = testContext(engine, true);
    ctx.io.columns = 50;
    printTable(ctx, columns, rows);
    const lines = ctx.out().trimEnd().split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(50);
    expect(lines[1]).toMatch(/^0123abcd {2}a rather long.*…\s+12,345 {2}3 min ago$/);
    expect(lines[2]).toMatch(/ {2}2020-01-02$/);
  });

  it('show human times on a terminal and the stored value when piped', () => {
    const piped = testContext(engine, false);
    printTable(piped, columns, rows);
    expect(piped.out().split('\n')[1]).toBe('4567ef01\tbob\t7\t2020-01-02T03:04:05.000Z');
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(relativeTime('2026-11-23T11:59:50Z', now)).toBe('just now');
    expect(relativeTime('2026-11-23T11:57:00Z', now)).toBe('3 min ago');
    expect(relativeTime('2026-11-23T07:00:00Z', now)).toBe('5 h ago');
    expect(relativeTime('2026-11-22T11:00:00Z', now)).toBe('yesterday');
    expect(relativeTime('2026-11-20T12:00:00Z', now)).toBe('3 days ago');
    expect(relativeTime('2026-01-01T00:00:00Z', now)).toBe('2026-01-01');
    expect(relativeTime('2026-11-10T12:00:00Z', now)).toBe('2026-11-10');
    expect(relativeTime('not a time', now)).toBe('not a time');
  });
});

describe('one table style (issue 37, item 10)', () => {
  it('shows ids at 8 characters on a terminal and whole when piped', () => {
    const idRows = [{ id: '3f0c6a1e-9d2b-4c1a-8e7f-0123456789ab', at: '2020-01-02T03:04:05.000Z' }];
    const cols = [
      { header: 'ID', value: (r: (typeof idRows)[0]) => r.id, id: true },
      { header: 'AT', value: (r: (typeof idRows)[0]) => r.at, time: true },
    ];
    const tty = testContext(engine, true);
    printTable(tty, cols, idRows);
    expect(tty.out().split('\n')[1]).toBe('3f0c6a1e  2020-01-02');
    const piped = testContext(engine, false);
    printTable(piped, cols, idRows);
    expect(piped.out()).toBe('3f0c6a1e-9d2b-4c1a-8e7f-0123456789ab\t2020-01-02T03:04:05.000Z\n');
  });

  it('keys list: short ids, whole scopes, human times', async () => {
    const { runKeysCreate, runKeysList } = await import('../../src/cli/commands/keys.js');
    const setup = testContext(engine, false);
    await engine.accounts.create('keyed');
    await runKeysCreate(setup, { account: 'keyed', scopes: 'mgpt.responses:create,mgpt.images:create,mgpt.logs:read' });
    const ctx = testContext(engine, true);
    ctx.io.columns = 80;
    await runKeysList(ctx, {});
    const row = ctx.out().split('\n')[1];
    expect(row).toMatch(/^\S{8}  /);
    expect(row).toContain('mgpt.responses:create,mgpt.images:create,mgpt.logs:read');
    expect(row).toMatch(/just now/);
  });

  it('prompts list says when a prompt changed as every table does', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = tempDir();
    mkdirSync(join(dir, 'prompts'));
    writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.');
    const { runPromptsList } = await import('../../src/cli/commands/prompts.js');
    const ctx = testContext(makeEngine(dir, { promptsDir: join(dir, 'prompts') }), true);
    await runPromptsList(ctx, {});
    expect(ctx.out().split('\n')[1]).toMatch(/^narrator\s+12\s+-\s+-\s+just now$/);
  });
});

describe('keys list: EXPIRES', () => {
  it('says when a key stops working, or that it did; "-" for one that never expires', async () => {
    const { expiryText } = await import('../../src/cli/commands/keys.js');
    const now = Date.parse('2026-11-27T10:00:00.000Z');
    expect(expiryText(null, now)).toBe('-');
    expect(expiryText('2026-11-27T10:00:30.000Z', now)).toBe('in 30 s');
    expect(expiryText('2026-11-27T10:05:00.000Z', now)).toBe('in 5 min');
    expect(expiryText('2026-11-27T13:00:00.000Z', now)).toBe('in 3 h');
    expect(expiryText('2026-12-30T10:00:00.000Z', now)).toBe('2026-12-30');
    expect(expiryText('2026-11-27T09:57:00.000Z', now)).toBe('expired 3 min ago');
  });
});
