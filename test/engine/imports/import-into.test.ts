import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalBackend } from '../../../src/backends/local.js';
import { writeChatgptExport } from '../../helpers/chatgpt-export.js';
import { makeEngine } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/temp.js';

const dir = tempDir('mgpt-import-into-');
const three = async (name: string) => {
  const file = join(dir, name);
  await writeChatgptExport(file, 3, (i) => ({ id: `c${i}`, title: `Chat ${i}`, at: 1_700_000_000 + i * 3600, texts: [`question ${i}`, `answer ${i}`] }));
  return file;
};

describe('--into after a per-conversation import (idempotency per conversation and target)', () => {
  it('gathers the conversations into the new entity; a re-run of the same --into imports nothing new; --into one of their own entities skips that one', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const file = await three('three.json');
    expect((await backend.importChats(file, {})).totals.imported).toBe(3);
    const into = await backend.importChats(file, { into: 'everything' });
    expect(into.conversations.map((c) => c.outcome)).toEqual(['created', 'appended', 'appended']);
    expect(into.entities.map((e) => [e.name, e.transcript.messages])).toEqual([['everything', 6]]);
    const again = await backend.importChats(file, { into: 'everything' });
    expect(again.conversations.map((c) => [c.outcome, c.reason])).toEqual(Array(3).fill(['skipped', 'imported before (--update appends what it gained since)']));
    expect(again.totals.imported).toBe(0);
    // A per-conversation re-run still skips them too.
    expect((await backend.importChats(file, {})).totals.imported).toBe(0);
    // Into the entity one of them made on its own: that one is there already.
    const own = await backend.importChats(file, { into: 'Chat 1' });
    expect(own.conversations.map((c) => [c.title, c.outcome])).toEqual([['Chat 0', 'appended'], ['Chat 1', 'skipped'], ['Chat 2', 'appended']]);
    await engine.close();
  });
});
