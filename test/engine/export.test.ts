import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError } from '../../src/core/errors.js';
import { readTar, tarHeader, tarPadding, tarTrailer } from '../../src/core/archive/tar.js';
import type { Engine } from '../../src/engine/engine.js';
import { bytes, collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');


/** An entity with a summary block and unicode content. */
async function rich(engine: Engine) {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'Zoë', instructions: 'Speak softly. ✨' }, 'local');
  for (let i = 0; i < 15; i++) await collect(engine.entities.send(e.id, { content: `note ${i}: café, naïve, 日本語 ${'x '.repeat(10)}` }, 'local'));
  expect((await engine.entities.window(e.id, 'local')).blocks[0].kind).toBe('summary');
  return e;
}

describe('export', () => {
  it('writes a tar with exactly manifest.json, transcript.json, window.json, rotations.json, memory.json whose sha256 values match', async () => {
    const engine = makeEngine(dir, { windowBudget: 120 });
    const e = await rich(engine);
    const tar = await bytes(await engine.entities.export(e.id, 'tar', 'local'));
    const path = join(dir, 'e.tar');
    writeFileSync(path, tar);
    expect(execFileSync('tar', ['-tf', path], { encoding: 'utf8' }).trim().split('\n')).toEqual([
      'manifest.json',
      'transcript.json',
      'window.json',
      'rotations.json',
      'memory.json',
    ]);
    const out = join(dir, 'x');
    mkdirSync(out);
    execFileSync('tar', ['-xf', path, '-C', out]);
    const read = (f: string) => readFileSync(join(out, f));
    const manifest = JSON.parse(read('manifest.json').toString());
    expect(manifest).toMatchObject({
      format: 'mgpt-entity',
      version: 2,
      entity: { id: e.id, name: 'Zoë', instructions: 'Speak softly. ✨', model: 'mgpt-1-27b', state: 'none' },
      transcript: { messages: 30, cap_tokens: 1_000_000 },
      window: { budget_tokens: 120 },
      exporter: 'mgpt/0.0.0',
    });
    expect(manifest.transcript.sha256).toBe(sha(read('transcript.json')));
    expect(manifest.window.sha256).toBe(sha(read('window.json')));
    expect(manifest.parts).toEqual({ 'rotations.json': { sha256: sha(read('rotations.json')) }, 'memory.json': { sha256: sha(read('memory.json')) } });
    expect(JSON.parse(read('memory.json').toString())).toEqual({ blocks: [], history: [] });
    const transcript = JSON.parse(read('transcript.json').toString());
    expect(transcript).toHaveLength(30);
    expect(transcript[0]).toEqual((await engine.entities.messages(e.id, { limit: 1 }, 'local')).data[0]);
    expect(JSON.parse(read('window.json').toString()).blocks).toEqual((await engine.entities.window(e.id, 'local')).blocks);
    engine.close();
  });

  it('round-trips: export, import, export again gives the same transcript and window (tar and JSON)', async () => {
    const engine = makeEngine(dir, { windowBudget: 120 });
    const e = await rich(engine);
    for (const format of ['tar', 'json'] as const) {
      const first = await bytes(await engine.entities.export(e.id, format, 'local'));
      const copy = await engine.entities.import(first, format, {}, 'local');
      expect(copy.id).not.toBe(e.id);
      expect(copy.transcript).toEqual((await engine.entities.get(e.id, 'local')).transcript);
      const again = await bytes(await engine.entities.export(copy.id, format, 'local'));
      const files = (b: Buffer) =>
        format === 'tar'
          ? Object.fromEntries(readTar(b).map((x) => [x.name, Buffer.from(x.body).toString()]))
          : (() => {
              const d = JSON.parse(b.toString());
              return { 'transcript.json': JSON.stringify(d.transcript), 'window.json': JSON.stringify(d.window), m: JSON.stringify(d.manifest) };
            })();
      const a = files(first);
      const b = files(again);
      expect(b['transcript.json']).toBe(a['transcript.json']);
      const stripIds = (w: string) => JSON.parse(w).blocks.map(({ id: _id, ...rest }: any) => rest);
      expect(stripIds(b['window.json'])).toEqual(stripIds(a['window.json']));
    }
    // With --keep-id after a delete, even block ids and the manifest's hashes come back identical.
    const tar = await bytes(await engine.entities.export(e.id, 'tar', 'local'));
    await expect(engine.entities.import(tar, 'tar', { keepId: true }, 'local')).rejects.toBeInstanceOf(ConflictError);
    await engine.entities.delete(e.id, 'local');
    const restored = await engine.entities.import(tar, 'tar', { keepId: true }, 'local');
    expect(restored.id).toBe(e.id);
    const m1 = JSON.parse(Buffer.from(readTar(tar)[0].body).toString());
    const m2 = JSON.parse(Buffer.from(readTar(await bytes(await engine.entities.export(e.id, 'tar', 'local')))[0].body).toString());
    expect(m2.transcript).toEqual(m1.transcript);
    expect(m2.window).toEqual(m1.window);
    // The restored entity keeps working.
    await collect(engine.entities.send(e.id, { content: 'still there?' }, 'local'));
    expect((await engine.entities.get(e.id, 'local')).transcript.messages).toBe(32);
    engine.close();
  });

  it('rejects bad, truncated, tampered and path-traversing archives, writing nothing', async () => {
    const engine = makeEngine(dir);
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    await collect(engine.entities.send(e.id, { content: 'hello' }, 'local'));
    const good = await bytes(await engine.entities.export(e.id, 'tar', 'local'));
    const entries = readTar(good);
    const build = (files: Array<[string, Uint8Array]>) =>
      Buffer.concat([...files.flatMap(([n, b]) => [tarHeader(n, b.length, 0), b, tarPadding(b.length)]), tarTrailer()]);
    const body = (name: string) => entries.find((x) => x.name === name)!.body;
    const tamperedTranscript = Buffer.from(Buffer.from(body('transcript.json')).toString().replace('hello', 'HELLO'));
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['truncated', good.subarray(0, 700), /truncated/],
      ['traversal', build([['../manifest.json', body('manifest.json')]]), /unsafe path/],
      ['extra entry', build([...entries.map((x) => [x.name, x.body] as [string, Uint8Array]), ['evil.sh', Buffer.from('rm -rf /')]]), /unexpected archive entry/],
      ['missing entry', build(entries.slice(0, 2).map((x) => [x.name, x.body])), /no window.json/],
      ['missing part', build(entries.slice(0, 3).map((x) => [x.name, x.body])), /no rotations.json/],
      ['missing memory part', build(entries.slice(0, 4).map((x) => [x.name, x.body])), /no memory.json/],
      ['tampered', build([['manifest.json', body('manifest.json')], ['transcript.json', tamperedTranscript], ['window.json', body('window.json')]]), /sha256 does not match/],
      ['not a tar', Buffer.from('hello world'), /not a valid export archive/],
    ];
    const count = () => sqliteOf(engine).db.prepare('SELECT count(*) AS n FROM entities').get();
    const before = count();
    for (const [name, archive, message] of cases) {
      const err = await engine.entities.import(archive, 'tar', {}, 'local').catch((x) => x);
      expect(err, name).toBeInstanceOf(BadRequestError);
      expect(err.message, name).toMatch(message);
    }
    const json = JSON.parse((await bytes(await engine.entities.export(e.id, 'json', 'local'))).toString());
    json.transcript[0].content = 'edited';
    await expect(engine.entities.import(Buffer.from(JSON.stringify(json)), 'json', {}, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/transcript sha256/) });
    await expect(engine.entities.import(Buffer.from('{nope'), 'json', {}, 'local')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/not valid JSON/) });
    expect(count()).toEqual(before);
    engine.close();
  });
});

describe('export is one snapshot', () => {
  it('a turn committed between the start of an export and its streaming: the export still imports and is self-consistent', async () => {
    const engine = makeEngine(dir, { windowBudget: 120 });
    const e = await rich(engine);
    for (const format of ['json', 'tar'] as const) {
      const windowBefore = (await engine.entities.window(e.id, 'local')).blocks.map((b) => [b.content, b.covers]);
      const pieces = await engine.entities.export(e.id, format, 'local');
      // The turn lands after the export was asked for and before its first byte was read.
      await collect(engine.entities.send(e.id, { content: `landed during the ${format} export` }, 'local'));
      const out = await bytes(pieces);
      const copy = await engine.entities.import(out, format, {}, 'local');
      const original = await engine.entities.get(e.id, 'local');
      expect(copy.transcript.messages).toBe(original.transcript.messages - 2);
      const copied = (await engine.entities.messages(copy.id, { limit: 100 }, 'local')).data.map((m) => m.content);
      expect(copied).not.toContain(`landed during the ${format} export`);
      expect((await engine.entities.window(copy.id, 'local')).blocks.map((b) => [b.content, b.covers])).toEqual(windowBefore);
    }
    engine.close();
  });
});
