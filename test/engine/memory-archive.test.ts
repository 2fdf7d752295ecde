import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { readTar, tarHeader, tarPadding, tarTrailer } from '../../src/core/archive/tar.js';
import type { Engine } from '../../src/engine/engine.js';
import { bytes, collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

/** The entity archive's version 2 (issue 33): pinned memory and its history ride along as the part memory.json; version 1 still imports. */
const dir = tempDir();
const T = Date.parse('2026-11-26T12:00:00.000Z');
const clock = { now: () => T, iso: () => new Date(T).toISOString() };
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

async function withMemory(engine: Engine, turns = 4): Promise<string> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'Zoë', instructions: 'Speak softly.' }, 'local');
  for (let i = 0; i < turns; i++) await collect(engine.entities.send(e.id, { content: `note ${i}: café ${'x '.repeat(10)}` }, 'local'));
  await engine.memory.set(e.id, 'user', 'Zoë, a café owner ✨', 'local');
  await engine.memory.set(e.id, 'deploy', 'PostgreSQL 15', 'local');
  await engine.memory.set(e.id, 'user', 'Zoë, who owns two cafés', 'local');
  await engine.memory.remove(e.id, 'deploy', 'local');
  return e.id;
}

type Entry = [string, Uint8Array];
const build = (files: Entry[]) => Buffer.concat([...files.flatMap(([n, b]) => [tarHeader(n, b.length, 0), b, tarPadding(b.length)]), tarTrailer()]);
const pairs = (entries: Array<{ name: string; body: Uint8Array }>): Entry[] => entries.map((x) => [x.name, x.body]);

/** The archive with memory.json replaced and the manifest rehashed to match: only the engine's own checks stand in the way. */
function withMemoryPart(entries: Array<{ name: string; body: Uint8Array }>, memory: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(memory));
  const manifest = JSON.parse(Buffer.from(entries[0].body).toString());
  manifest.parts['memory.json'] = { sha256: sha(body) };
  return build([['manifest.json', Buffer.from(JSON.stringify(manifest))], ...pairs(entries.slice(1, 4)), ['memory.json', body]]);
}

describe('archive version 2: pinned memory', () => {
  it('round-trips byte-identical with both parts, tar and JSON: blocks and every change of the history come back as they were', async () => {
    // A small window, so the archive's window history holds rotations beside the memory.
    const a = makeEngine(dir, { clock, windowBudget: 120 });
    const b = makeEngine(dir, { clock, windowBudget: 120 });
    const c = makeEngine(dir, { clock, windowBudget: 120 });
    try {
      const id = await withMemory(a, 12);
      for (const [format, into] of [['tar', b], ['json', c]] as const) {
        const first = await bytes(await a.entities.export(id, format, 'local'));
        const copy = await into.entities.import(first, format, { keepId: true }, 'local');
        const again = await bytes(await into.entities.export(copy.id, format, 'local'));
        expect(again.equals(first), format).toBe(true);
        expect(await into.memory.list(id, 'local')).toEqual(await a.memory.list(id, 'local'));
        expect(await into.memory.history(id, 'local')).toEqual(await a.memory.history(id, 'local'));
      }
      const entries = readTar(await bytes(await a.entities.export(id, 'tar', 'local')));
      expect(entries.map((e) => e.name)).toEqual(['manifest.json', 'transcript.json', 'window.json', 'rotations.json', 'memory.json']);
      expect(JSON.parse(Buffer.from(entries[3].body).toString()).rotations.length).toBeGreaterThan(0);
      const memory = JSON.parse(Buffer.from(entries[4].body).toString());
      expect(memory.blocks.map((x: { label: string }) => x.label)).toEqual(['user']);
      expect(memory.history).toHaveLength(4);
      // One sha256 per part, in the manifest's parts: no second summary of the memory.
      const manifest = JSON.parse(Buffer.from(entries[0].body).toString());
      expect(manifest.parts['memory.json']).toEqual({ sha256: sha(entries[4].body) });
      expect(manifest.memory).toBeUndefined();
      // A copy without --keep-id has the memory too.
      const copy = await a.entities.import(await bytes(await a.entities.export(id, 'json', 'local')), 'json', {}, 'local');
      expect((await a.memory.get(copy.id, 'user', 'local')).text).toBe('Zoë, who owns two cafés');
      expect((await a.memory.history(copy.id, 'local')).history).toHaveLength(4);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('a version 1 archive (no parts) still imports, with no memory; a version 1 manifest with a memory part is refused', async () => {
    const engine = makeEngine(dir);
    try {
      const id = await withMemory(engine);
      const entries = readTar(await bytes(await engine.entities.export(id, 'tar', 'local')));
      const manifest = JSON.parse(Buffer.from(entries[0].body).toString());
      delete manifest.parts;
      manifest.version = 1;
      const head: Entry = ['manifest.json', Buffer.from(JSON.stringify(manifest))];
      const copy = await engine.entities.import(build([head, ...pairs(entries.slice(1, 3))]), 'tar', {}, 'local');
      expect((await engine.memory.list(copy.id, 'local')).memory).toEqual([]);
      expect(copy.transcript.messages).toBe(8);
      const smuggled = build([head, ...pairs(entries.slice(1, 3)), ['memory.json', entries[4].body]]);
      await expect(engine.entities.import(smuggled, 'tar', {}, 'local')).rejects.toThrow(/memory.json is not named in the manifest/);
    } finally {
      await engine.close();
    }
  });

  it('refuses a tampered, malformed or over-limit memory part, writing nothing', async () => {
    const source = makeEngine(dir);
    const small = makeEngine(dir, { memoryTokens: 5 });
    try {
      const id = await withMemory(source);
      const entries = readTar(await bytes(await source.entities.export(id, 'tar', 'local')));
      const memory = JSON.parse(Buffer.from(entries[4].body).toString());
      const tampered = Buffer.from(Buffer.from(entries[4].body).toString().replace('two cafés', 'three cafés'));
      const block = memory.blocks[0];
      const cases: Array<[Engine, Buffer, RegExp]> = [
        [source, build([...pairs(entries.slice(0, 4)), ['memory.json', tampered]]), /memory.json sha256 does not match/],
        [source, withMemoryPart(entries, { blocks: [{ ...block, label: '../etc' }], history: [] }), /memory.json: block label "..\/etc" is not a valid label/],
        [source, withMemoryPart(entries, { blocks: [block, block], history: [] }), /memory.json: it holds block user twice/],
        [source, withMemoryPart(entries, { blocks: [{ ...block, text: ' ' }], history: [] }), /memory.json: block user is incomplete/],
        [source, withMemoryPart(entries, { blocks: [], history: [{ label: 'user', before: null, after: 'x', source: 'admin', created_at: 'now' }] }), /memory.json: a history entry is incomplete/],
        [source, withMemoryPart(entries, [1, 2]), /memory.json: it must be an object with blocks and history/],
        [small, build(pairs(entries)), /over this engine's limits \(16 blocks, 5 tokens\)/],
      ];
      const before = (await source.entities.list('local')).data.length;
      for (const [engine, tar, message] of cases) {
        const err = await engine.entities.import(tar, 'tar', {}, 'local').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(BadRequestError);
        expect((err as Error).message).toMatch(message);
      }
      const over = await small.entities.import(build(pairs(entries)), 'tar', {}, 'local').catch((e: BadRequestError) => e);
      expect((over as BadRequestError).hint).toMatch(/mgpt config set engine.memoryTokens/);
      expect((await source.entities.list('local')).data.length).toBe(before);
      expect((await small.entities.list('local')).data).toEqual([]);
    } finally {
      await Promise.all([source.close(), small.close()]);
    }
  });
});
