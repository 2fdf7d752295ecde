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

describe('--into and the transcript cap', () => {
  it('refuses up front, dry run or not, when the import would reach the cap, with the numbers and the way in; a raised cap lets it in', async () => {
    const engine = makeEngine(dir, { transcriptCap: 60, maxTranscriptCap: 1000 });
    const backend = new LocalBackend(engine);
    const file = await three('three-capped.json');
    const dry = await backend.importChats(file, { into: 'all', dryRun: true }).catch((e: unknown) => e);
    expect(dry).toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(
        /^--into "all": the import would add \d+ tokens to a transcript of 0, reaching its cap of 60 tokens \(a transcript at its cap is read-only\); nothing was imported\. Create it and raise its cap first: mgpt entities create --name "all", then mgpt entities update "all" --cap \d+ \(this engine allows up to 1,000\); or import fewer conversations \(--only, --since\)\.$/,
      ),
    });
    await expect(backend.importChats(file, { into: 'all' })).rejects.toThrow(/reaching its cap of 60 tokens/);
    expect((await backend.listEntities()).data).toEqual([]);
    // An existing entity: the same refusal, with its id in the command that raises its cap.
    const e = await backend.createEntity({ model: 'mgpt-1-27b', name: 'all' } as never);
    const err = (await backend.importChats(file, { into: 'all' }).catch((x: unknown) => x)) as Error;
    const adding = Number(/would add (\d+) tokens/.exec(err.message)![1]);
    expect(err.message).toContain(`nothing was imported. Raise its cap first: mgpt entities update ${e.id} --cap ${adding + 1} (this engine allows up to 1,000); or import fewer conversations (--only, --since).`);
    // Beyond what the engine allows: refused, naming the setting.
    await expect(backend.updateEntity(e.id, { cap_tokens: 1001 })).rejects.toMatchObject({ code: 'bad_request', message: 'cap_tokens 1001 is over the highest this engine allows, 1000 (its operator can allow more: engine.maxTranscriptCap, MGPT_MAX_TRANSCRIPT_CAP)' });
    await backend.updateEntity(e.id, { cap_tokens: adding + 1 });
    const res = await backend.importChats(file, { into: 'all' });
    expect(res.totals).toMatchObject({ imported: 3, tokens: adding });
    expect(res.entities[0]).toMatchObject({ read_only: false, transcript: { tokens: adding, cap_tokens: adding + 1 } });
    // A cap at or below what the transcript holds would make it read-only: refused.
    await expect(backend.updateEntity(e.id, { cap_tokens: adding })).rejects.toThrow(`cap_tokens ${adding} is not above the ${adding} tokens the transcript already holds`);
    await engine.close();
  });
});
