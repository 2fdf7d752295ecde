import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_USER_ID } from '../../src/core/wire/universe-types.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { tempDir } from '../helpers/temp.js';

// Issue 34, item 7: stored prompts go through the Store seam. Two engines on one database file,
// each with a prompts directory of its own, as two processes (or replicas) would be.
const dir = tempDir('mgpt-stored-prompts-');
let n = 0;

function pair(): { a: ReturnType<typeof openEngineSync>; b: ReturnType<typeof openEngineSync>; aDir: string; bDir: string } {
  const db = join(dir, `p-${n++}.db`);
  const aDir = join(dir, `a-${n}`);
  const bDir = join(dir, `b-${n}`);
  mkdirSync(aDir);
  mkdirSync(bDir);
  return { a: openEngineSync({ db, promptsDir: aDir }), b: openEngineSync({ db, promptsDir: bDir }), aDir, bDir };
}

/** What a universe snapshotted of its prompt when it was created. */
async function snapshotOf(e: ReturnType<typeof openEngineSync>, id: string): Promise<{ text: string; additionalInstructions: string | null }> {
  const row = await e.universes.owned(id, LOCAL_USER_ID);
  return { text: row.promptText, additionalInstructions: row.additionalInstructions };
}

describe('stored prompts in the store', () => {
  it("a prompt one process adds is the other's, which creates a universe from it", async () => {
    const { a, b } = pair();
    await a.prompts.add('narrator', { text: 'You narrate.', responseFormat: { type: 'json_object' }, additionalInstructions: 'Be brief.' });
    expect(await b.prompts.get('narrator')).toMatchObject({ name: 'narrator', text: 'You narrate.', responseFormat: { type: 'json_object' }, additionalInstructions: 'Be brief.' });
    expect((await b.prompts.get('narrator')).file).toBeUndefined();
    const u = await b.universes.create({ storedPrompt: 'narrator' });
    expect((await b.universes.doc(u.universe)).prompt).toMatchObject({ storedPrompt: 'narrator' });
    await expect(a.prompts.add('narrator', { text: 'again' })).rejects.toMatchObject({ code: 'already_exists' });
    await b.prompts.add('narrator', { text: 'You narrate, kindly.' }, { force: true });
    expect((await a.prompts.get('narrator')).text).toBe('You narrate, kindly.');
    a.close();
    b.close();
  });

  it("imports a directory's file the first time its name is asked for, into the store every process reads", async () => {
    const { a, b, aDir } = pair();
    writeFileSync(join(aDir, 'quest.md'), '---\nadditionalInstructions: Roll dice.\n---\nYou run quests.\n');
    // b's directory has no quest.md: until a imports it, b has no such prompt.
    await expect(b.prompts.get('quest')).rejects.toMatchObject({ code: 'not_found' });
    expect(await a.prompts.get('quest')).toMatchObject({ text: 'You run quests.', additionalInstructions: 'Roll dice.', file: join(aDir, 'quest.md') });
    expect((await b.prompts.list()).map((p) => p.name)).toEqual(['quest']);
    const before = await a.universes.create({ storedPrompt: 'quest' });
    // A stored prompt is a file whose edits reach universes created afterwards (the universe seed):
    // the edit is written back to the store, so the other process, whose directory has no such
    // file, creates from the edited text too; a universe made before keeps its snapshot.
    writeFileSync(join(aDir, 'quest.md'), '---\nadditionalInstructions: Roll two dice.\n---\nChanged.\n');
    const after = await a.universes.create({ storedPrompt: 'quest' });
    expect(await b.prompts.get('quest')).toMatchObject({ text: 'Changed.', additionalInstructions: 'Roll two dice.' });
    expect(await b.universes.create({ storedPrompt: 'quest' })).toBeDefined();
    expect(await snapshotOf(a, after.universe)).toMatchObject({ text: 'Changed.', additionalInstructions: 'Roll two dice.' });
    expect(await snapshotOf(a, before.universe)).toMatchObject({ text: 'You run quests.', additionalInstructions: 'Roll dice.' });
    expect((await a.prompts.list()).find((p) => p.name === 'quest')?.text).toBe('Changed.');
    // A prompt replaced by hand no longer follows its old file.
    await b.prompts.add('quest', { text: 'By hand.' }, { force: true });
    writeFileSync(join(aDir, 'quest.md'), 'Edited again.\n');
    expect((await a.prompts.get('quest')).text).toBe('By hand.');
    a.close();
    b.close();
  });

  it('a removed prompt stays removed though its file is still in a directory; an explicit add brings it back', async () => {
    const { a, b, aDir } = pair();
    writeFileSync(join(aDir, 'old.md'), 'Old text.\n');
    expect((await a.prompts.list()).map((p) => p.name)).toEqual(['old']);
    await b.prompts.remove('old');
    expect(await a.prompts.list()).toEqual([]);
    await expect(a.prompts.get('old')).rejects.toMatchObject({ code: 'not_found' });
    // Nor does an edit of the file left behind bring it back.
    writeFileSync(join(aDir, 'old.md'), 'Old text, edited.\n');
    await expect(a.prompts.get('old')).rejects.toMatchObject({ code: 'not_found' });
    expect(await a.prompts.list()).toEqual([]);
    expect(await a.prompts.importDir(aDir)).toEqual({ imported: [], skipped: ['old'] });
    await expect(b.prompts.remove('old')).rejects.toMatchObject({ code: 'not_found' });
    await a.prompts.add('old', { text: 'New text.' });
    expect((await b.prompts.get('old')).text).toBe('New text.');
    a.close();
    b.close();
  });

  it('imports a whole directory, and refuses a directory that is not there', async () => {
    const { a, b } = pair();
    const src = join(dir, `import-${n}`);
    mkdirSync(src);
    writeFileSync(join(src, 'one.md'), 'One.\n');
    writeFileSync(join(src, 'two.txt'), 'Two.\n');
    writeFileSync(join(src, '.hidden.md'), 'Not a name.\n');
    writeFileSync(join(src, 'notes.json'), '{}');
    expect(await a.prompts.importDir(src)).toEqual({ imported: ['one', 'two'], skipped: [] });
    expect((await b.prompts.list()).map((p) => [p.name, p.text])).toEqual([['one', 'One.'], ['two', 'Two.']]);
    await expect(a.prompts.importDir(join(dir, 'no-such-dir'))).rejects.toMatchObject({ code: 'bad_request' });
    // A bad front matter is refused with the file named, and nothing of it is stored.
    writeFileSync(join(src, 'bad.md'), '---\nunknownKey: 1\n---\ntext\n');
    await expect(a.prompts.importDir(src)).rejects.toMatchObject({ code: 'bad_request', message: expect.stringContaining('bad.md') });
    await expect(b.prompts.get('bad')).rejects.toMatchObject({ code: 'not_found' });
    a.close();
    b.close();
  });
});
