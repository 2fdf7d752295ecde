import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError } from '../../src/core/errors.js';
import { readTar, tarHeader, tarPadding, tarTrailer } from '../../src/core/archive/tar.js';
import type { Engine } from '../../src/engine/engine.js';
import { bytes, collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Archives edited by someone who also rehashes them: the sha256 values match, so only the
 * checks of the content itself can refuse them.
 */
const dir = tempDir();
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');


interface Files {
  manifest: any;
  transcript: any[];
  window: any;
}

async function exported(engine: Engine, id: string): Promise<Files> {
  const entries = readTar(await bytes(await engine.entities.export(id, 'tar', 'local')));
  const parsed = (name: string) => JSON.parse(Buffer.from(entries.find((e) => e.name === name)!.body).toString());
  return { manifest: parsed('manifest.json'), transcript: parsed('transcript.json'), window: parsed('window.json') };
}

/** A version 1 tar (no window history) of the edited files whose manifest carries the right sha256 values and totals. */
function rehashed(f: Files): Buffer {
  f.manifest.version = 1;
  delete f.manifest.parts;
  const transcript = Buffer.from(JSON.stringify(f.transcript));
  f.window.tokens = f.window.blocks.reduce((n: number, b: any) => n + b.tokens, 0);
  const window = Buffer.from(JSON.stringify(f.window));
  f.manifest.transcript = {
    ...f.manifest.transcript,
    messages: f.transcript.length,
    tokens: f.transcript.reduce((n: number, m: any) => n + m.tokens, 0),
    sha256: sha(transcript),
  };
  f.manifest.window = { ...f.manifest.window, tokens: f.window.tokens, blocks: f.window.blocks.length, sha256: sha(window) };
  const manifest = Buffer.from(JSON.stringify(f.manifest));
  const files: Array<[string, Buffer]> = [['manifest.json', manifest], ['transcript.json', transcript], ['window.json', window]];
  return Buffer.concat([...files.flatMap(([n, b]) => [tarHeader(n, b.length, 0), b, tarPadding(b.length)]), tarTrailer()]);
}

async function setup() {
  const engine = makeEngine(dir);
  const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'src' }, 'local');
  await collect(engine.entities.send(e.id, { content: 'hello there' }, 'local'));
  await collect(engine.entities.send(e.id, { content: 'second message' }, 'local'));
  const count = () => sqliteOf(engine).db.prepare('SELECT (SELECT count(*) FROM entities) AS e, (SELECT count(*) FROM blocks) AS b').get();
  return { engine, e, count };
}

describe('import of rehashed hostile archives', () => {
  it('refuses window text that is not in the transcript, and roles that do not alternate; nothing is written', async () => {
    const { engine, e, count } = await setup();
    const before = count();
    const cases: Array<[string, (f: Files) => void, RegExp]> = [
      ['window text', (f) => (f.window.blocks[0].content = 'words nobody said'), /window block 0 differs from transcript message 1/],
      ['window role', (f) => (f.window.blocks[1].role = 'user'), /window block 1 differs from transcript message 2/],
      [
        'two user messages',
        (f) => {
          f.transcript[1].role = 'user';
          f.window.blocks[1].role = 'user';
        },
        /transcript message 2 has role "user"; expected assistant/,
      ],
      [
        'dangling user message',
        (f) => {
          f.transcript.pop();
          f.window.blocks.pop();
        },
        /ends with a user message/,
      ],
      ['long name', (f) => (f.manifest.entity.name = 'x'.repeat(201)), /manifest entity\.name is 201 characters; the limit is 200/],
      ['tiny budget', (f) => ((f.manifest.window.budget_tokens = 1), (f.window.budget_tokens = 1)), /manifest window\.budget_tokens must be an integer from 16/],
    ];
    for (const [name, edit, message] of cases) {
      const f = await exported(engine, e.id);
      edit(f);
      const err = await engine.entities.import(rehashed(f), 'tar', {}, 'local').catch((x) => x);
      expect(err, name).toBeInstanceOf(BadRequestError);
      expect(err.message, name).toMatch(message);
    }
    expect(count()).toEqual(before);
    engine.close();
  });

  it("recounts tokens with the engine's estimator instead of trusting the archive's counts", async () => {
    const { engine, e } = await setup();
    const original = await engine.entities.get(e.id, 'local');
    const f = await exported(engine, e.id);
    for (const m of f.transcript) m.tokens = 0;
    for (const b of f.window.blocks) b.tokens = 0;
    const copy = await engine.entities.import(rehashed(f), 'tar', {}, 'local');
    expect(copy.transcript.tokens).toBe(original.transcript.tokens);
    expect(copy.transcript.tokens).toBeGreaterThan(0);
    expect(copy.window.tokens).toBe(original.window.tokens);
    expect((await engine.entities.window(copy.id, 'local')).blocks.map((b) => b.tokens)).toEqual((await engine.entities.window(e.id, 'local')).blocks.map((b) => b.tokens));
    expect((await engine.entities.messages(copy.id, {}, 'local')).data.map((m) => m.tokens)).toEqual((await engine.entities.messages(e.id, {}, 'local')).data.map((m) => m.tokens));
    engine.close();
  });

  it('--keep-id: a taken entity id or block id is a conflict with a hint, not a raw SQLite error', async () => {
    const { engine, e, count } = await setup();
    const tar = await bytes(await engine.entities.export(e.id, 'tar', 'local'));
    const taken = await engine.entities.import(tar, 'tar', { keepId: true }, 'local').catch((x) => x);
    expect(taken).toBeInstanceOf(ConflictError);
    expect(taken.code).toBe('already_exists');
    expect(taken.message).toMatch(`an entity with id ${e.id} already exists`);
    expect(taken.hint).toMatch(/without --keep-id/);
    // A new entity id but the original's block ids.
    const f = await exported(engine, e.id);
    f.manifest.entity.id = 'another-id';
    const before = count();
    const err = await engine.entities.import(rehashed(f), 'tar', { keepId: true }, 'local').catch((x) => x);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.code).toBe('already_exists');
    expect(err.message).toMatch(/a window block with id .* already exists/);
    expect(err.hint).toMatch(/without --keep-id/);
    expect(count()).toEqual(before);
    // Without --keep-id the same archive imports with fresh ids.
    const copy = await engine.entities.import(rehashed(f), 'tar', {}, 'local');
    expect(copy.id).not.toBe('another-id');
    engine.close();
  });
});
