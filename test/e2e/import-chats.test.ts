import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, mgptBinary } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { FIXTURES } from '../engine/imports/expected.js';

// `mgpt import` on other tools' exports, through the real binary where the bundle matters.
const dir = tempDir('mgpt-import-chats-');
const env = cliEnv(dir);

describe('mgpt import FILE (a chat export)', () => {
  it("imports ChatGPT's .zip with the real binary, says what it made, and search finds it at once", async () => {
    const r = await mgptBinary(['import', join(FIXTURES, 'chatgpt-export.zip'), '--json'], env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.conversations.map((c: { outcome: string }) => c.outcome)).toEqual(['created', 'skipped', 'created']);
    expect(report.entities.map((e: { name: string }) => e.name)).toEqual(['Trip plan', 'Trip plan (2)']);
    const found = await mgptBinary(['search', 'Kyōto', '--json'], env);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout).data.map((h: { entity_name: string; seq: number; snippet: string }) => [h.entity_name, h.seq, h.snippet.includes('Kyōto (京都)')])).toEqual([['Trip plan', 1, true]]);
    const again = await mgptBinary(['import', join(FIXTURES, 'chatgpt-export.zip')], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('imported 0 of 3 conversations from chatgpt: 0 messages, 0 tokens; 3 skipped');
  });

  it('reads stdin, tells the format, and lists the conversations as a table when piped', async () => {
    const r = await mgpt(['import', '-', '--dry-run'], env, readFileSync(join(FIXTURES, 'openwebui-chat-export.json'), 'utf8'));
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0].split('\t')).toEqual(['planned', 'Time zones', '4', expect.stringMatching(/^\d+$/), '1', 'Time zones', '']);
    expect(r.stderr).toMatch(/^would import 2 of 3 conversations from openwebui: 8 messages, \d+ tokens; 1 skipped; 1 message on other branches left out; nothing was written \(--dry-run\)\n$/);
  });

  it('a truncated export: exit 2, the byte where it ends, nothing made', async () => {
    const file = join(FIXTURES, 'claude-truncated.json');
    const r = await mgpt(['import', file], cliEnv(join(dir, 'truncated')));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`it is truncated (at byte ${readFileSync(file).length})`);
    expect((await mgpt(['entities', 'list', '--json'], cliEnv(join(dir, 'truncated')))).stdout).toMatch(/"data": \[\]/);
  });

  it('refuses the flags of the other kind of file, and an unknown --from', async () => {
    const keep = await mgpt(['import', join(FIXTURES, 'claude-conversations.json'), '--keep-id'], env);
    expect(keep.code).toBe(2);
    expect(keep.stderr).toMatch(/^error: --keep-id does not apply to a chat export/);
    const into = await mgpt(['import', join(FIXTURES, 'claude-conversations.json'), '--from', 'mgpt', '--into', 'x'], env);
    expect(into.code).toBe(2);
    expect(into.stderr).toMatch(/^error: --into does not apply to an mgpt archive/);
    const from = await mgpt(['import', join(FIXTURES, 'claude-conversations.json'), '--from', 'gemini'], env);
    expect(from.code).toBe(2);
    expect(from.stderr).toMatch(/^error: --from "gemini" is not one of auto, mgpt, chatgpt, claude, openwebui/);
  });
});
