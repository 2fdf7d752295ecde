import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalBackend } from '../../../src/backends/local.js';
import { ConflictError } from '../../../src/core/errors.js';
import { entitySubject, takeLease } from '../../../src/engine/support/lease.js';
import { importNoteText } from '../../../src/engine/imports/plan.js';
import { writeChatgptExport } from '../../helpers/chatgpt-export.js';
import { bytes, collect, makeEngine } from '../../helpers/engine.js';
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

describe("the note an import's fold leaves, recorded as its rotation", () => {
  const FILLER = 'We went through the rest of it slowly, one point after another, and agreed to come back to it later on.';
  const many = async (name: string, n: number) => {
    const file = join(dir, name);
    await writeChatgptExport(file, n, (i) => ({ id: `m${i}`, title: `Talk ${i}`, at: 1_700_000_000 + i * 86_400, texts: [`question ${i}: ${FILLER}`, `answer ${i}: ${FILLER}`] }));
    return file;
  };

  it('--into many conversations: one note, whole, the window at the target; one import rotation that rotate --undo takes back', async () => {
    const budget = 2000;
    const engine = makeEngine(dir, { windowBudget: budget });
    const backend = new LocalBackend(engine);
    const res = await backend.importChats(await many('many.json', 40), { into: 'all' });
    const id = res.entities[0].id;
    const n = res.entities[0].transcript.messages;
    expect(n).toBe(80);
    const w = await backend.getWindow(id);
    const note = w.blocks[0];
    expect(note.kind).toBe('summary');
    // One note for the import, not one a fold: it names the whole span once, as a whole sentence.
    expect(note.content.match(/were imported from ChatGPT/g)).toHaveLength(1);
    expect(note.content).toMatch(new RegExp(`^Messages 1-${note.covers[1]} of this transcript were imported from ChatGPT \\(written from 2023-11-14 to 2023-12-\\d\\d\\) and are not in the live window\\. They were not summarized: search \\(mgpt search, /search\\) and recall reach every word of them\\.$`));
    // The window ends at the rotation target (25% of the budget), not wherever the last conversation left it.
    expect(w.tokens).toBeLessThanOrEqual(budget * 0.25);
    expect(w.blocks.at(-1)!.covers).toEqual([n, n]);
    const { rotations } = await backend.listRotations(id);
    expect(rotations).toHaveLength(1);
    expect(rotations[0]).toMatchObject({ trigger: 'import', seq: null, from_seq: 1, to_seq: note.covers[1], summary: { text: note.content }, route: { provider: 'mgpt', model: 'import-note' }, undone: false });
    expect(rotations[0].blocks_before).toHaveLength(n);
    expect(rotations[0].blocks_after.map((b) => b.id)).toEqual(w.blocks.map((b) => b.id));
    // An archive carries the import's rotation: a copy lists it as the original does.
    const copy = await engine.entities.import(await bytes(await engine.entities.export(id, 'tar', 'local')), 'tar', {}, 'local');
    expect((await backend.listRotations(copy.id)).rotations.map((r) => [r.trigger, r.from_seq, r.to_seq, r.summary.text])).toEqual([['import', 1, note.covers[1], note.content]]);
    await backend.deleteEntity(copy.id);
    // Its summary can be written again by the entity's model, and that taken back, like any rotation's.
    const again = await backend.rotate(id, { action: 'resummarize' });
    expect(again.window.blocks[0].content).not.toBe(note.content);
    expect(again.rotation).toMatchObject({ trigger: 'resummarize', from_seq: 1, to_seq: note.covers[1] });
    expect((await backend.rotate(id, { action: 'undo' })).window.blocks[0].content).toBe(note.content);
    // Undo: every imported message is back in the window, one block each, with the ids it had.
    const undone = await backend.rotate(id, { action: 'undo' });
    expect(undone.window.blocks.map((b) => [b.kind, b.covers[0]])).toEqual(Array.from({ length: n }, (_, i) => ['message', i + 1]));
    expect(undone.window.blocks.map((b) => b.id)).toEqual(rotations[0].blocks_before.map((b) => b.id));
    expect((await backend.listRotations(id)).rotations.map((r) => [r.trigger, r.undone])).toEqual([['import', true], ['resummarize', true]]);
    // The next turn folds again, as after any undo.
    await collect(backend.sendMessage(id, { content: 'And now?', stream: false } as never));
    const after = await backend.listRotations(id);
    expect(after.rotations.map((r) => r.trigger)).toEqual(['import', 'resummarize', 'turn']);
    await engine.close();
  });

  it('an import into an entity with a summary of its own keeps that summary whole, then one note for what it folded', async () => {
    const engine = makeEngine(dir, { windowBudget: 2000 });
    const backend = new LocalBackend(engine);
    await backend.importChats(await many('first.json', 40), { into: 'kept' });
    const first = (await backend.getWindow((await backend.resolveEntity('kept')).id)).blocks[0].content;
    const more = join(dir, 'more.json');
    await writeChatgptExport(more, 60, (i) => ({ id: `x${i}`, title: `Later ${i}`, at: 1_800_000_000 + i * 86_400, texts: [`later question ${i}: ${FILLER}`, `later answer ${i}: ${FILLER}`] }));
    const res = await backend.importChats(more, { into: 'kept' });
    const id = res.entities[0].id;
    const note = (await backend.getWindow(id)).blocks[0].content;
    expect(note.startsWith(`${first}\n\n`)).toBe(true);
    // The live messages the entity had before (73-80) are folded with the imported ones, and the note says so.
    expect(note.slice(first.length + 2)).toMatch(
      /^Messages 81-\d+ of this transcript were imported from ChatGPT \(written from 2027-01-15 to 2027-0\d-\d\d\); they and messages 73-80, from before the import, are not in the live window\. None of them were summarized: search \(mgpt search, \/search\) and recall reach every word of them\.$/,
    );
    expect(note.match(/were imported from ChatGPT/g)).toHaveLength(2);
    expect((await backend.listRotations(id)).rotations.map((r) => [r.trigger, r.from_seq])).toEqual([['import', 1], ['import', 73]]);
    await engine.close();
  });
});

describe('importNoteText: whole sentences or nothing', () => {
  const facts = { source: 'chatgpt' as const, folded: [1, 11] as [number, number], firstImported: 1, dates: ['2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z'] as [string, string] };
  const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
  it('takes the first form that fits: earlier summary and note, earlier and short note, earlier alone; never a cut', () => {
    const full = importNoteText(facts, undefined, 1000, words);
    expect(full).toBe('Messages 1-11 of this transcript were imported from ChatGPT (written from 2024-01-01 to 2024-02-01) and are not in the live window. They were not summarized: search (mgpt search, /search) and recall reach every word of them.');
    const short = 'Messages 1-11 are out of the live window; search and recall reach them.';
    expect(importNoteText(facts, undefined, words(full) - 1, words)).toBe(short);
    expect(importNoteText(facts, undefined, words(short) - 1, words)).toBe('');
    expect(importNoteText(facts, undefined, 0, words)).toBe('');
    const earlier = 'Ada planned a trip to Kyoto.';
    expect(importNoteText(facts, earlier, 1000, words)).toBe(`${earlier}\n\n${full}`);
    expect(importNoteText(facts, earlier, words(earlier) + words(short), words)).toBe(`${earlier}\n\n${short}`);
    expect(importNoteText(facts, earlier, words(earlier), words)).toBe(earlier);
  });
});

describe('an --into entity another writer holds', () => {
  it('is refused as busy by its name, with its id on the error', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const file = await three('three-busy.json');
    const ada = await backend.createEntity({ model: 'mgpt-1-27b', name: 'ada' } as never);
    const held = await takeLease(engine.deps, { subject: entitySubject(ada.id), refused: () => new Error('taken') });
    const err = (await backend.importChats(file, { into: 'ada' }).catch((x: unknown) => x)) as ConflictError;
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.message).toBe('entity ada is busy: a turn or another import is writing it');
    expect(err.entityId).toBe(ada.id);
    await held.release();
    expect((await backend.importChats(file, { into: 'ada' })).totals.imported).toBe(3);
    await engine.close();
  });
});
