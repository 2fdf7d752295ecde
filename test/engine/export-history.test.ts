import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/core/errors.js';
import { readTar, tarHeader, tarPadding, tarTrailer } from '../../src/core/archive/tar.js';
import type { Engine } from '../../src/engine/engine.js';
import { bytes, collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

/** A clock the test moves: two exports at one moment are the same bytes. */
function testClock() {
  let t = Date.parse('2026-11-01T00:00:00.000Z');
  return { clock: { now: () => t, iso: () => new Date(t).toISOString() }, tick: () => (t += 1000) };
}

/** An entity whose history has turn rotations, a manual one, an undone one and a resummarize. */
async function withHistory(engine: Engine, tick: () => number): Promise<string> {
  const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'Ledger', instructions: 'Keep the ledger. ✨' }, 'local');
  const send = async (i: number) => {
    tick();
    await collect(engine.entities.send(e.id, { content: `entry ${i}: café, naïve, 日本語 ${'cargo '.repeat(8)}` }, 'local'));
  };
  for (let i = 0; i < 14; i++) await send(i);
  for (const action of ['rotate', 'undo', 'resummarize'] as const) {
    tick();
    await engine.entities.rotate(e.id, { action }, 'local');
    await send(100);
  }
  const { rotations } = await engine.entities.rotations(e.id, 'local');
  expect(rotations.map((r) => r.trigger)).toEqual(expect.arrayContaining(['turn', 'manual', 'resummarize']));
  expect(rotations.some((r) => r.undone)).toBe(true);
  return e.id;
}

describe('export and import carry the window history (archive version 2)', () => {
  it('a version 2 archive round-trips byte-identical (tar and JSON)', async () => {
    const { clock, tick } = testClock();
    const engine = makeEngine(dir, { windowBudget: 120, clock });
    const id = await withHistory(engine, tick);
    for (const format of ['tar', 'json'] as const) {
      const first = await bytes(await engine.entities.export(id, format, 'local'));
      const turnAt = await engine.entities.windowAt(id, '25', 'local');
      await engine.entities.delete(id, 'local');
      await engine.entities.import(first, format, { keepId: true }, 'local');
      const again = await bytes(await engine.entities.export(id, format, 'local'));
      expect(again.equals(first), format).toBe(true);
      expect(await engine.entities.windowAt(id, '25', 'local')).toEqual(turnAt);
    }
    engine.close();
  });

  it('a copy (new ids) has the same history and windows, and its undo brings back blocks of its own', async () => {
    const { clock, tick } = testClock();
    const engine = makeEngine(dir, { windowBudget: 120, clock });
    const id = await withHistory(engine, tick);
    const copy = await engine.entities.import(await bytes(await engine.entities.export(id, 'tar', 'local')), 'tar', {}, 'local');
    const noIds = (rs: Awaited<ReturnType<Engine['entities']['rotations']>>) =>
      rs.rotations.map((r) => ({ ...r, blocks_before: r.blocks_before.map(({ id: _, ...b }) => b), blocks_after: r.blocks_after.map(({ id: _, ...b }) => b) }));
    expect(noIds(await engine.entities.rotations(copy.id, 'local'))).toEqual(noIds(await engine.entities.rotations(id, 'local')));
    for (const seq of ['1', '13', '29', '33']) {
      expect((await engine.entities.windowAt(copy.id, seq, 'local')).prompt).toEqual((await engine.entities.windowAt(id, seq, 'local')).prompt);
    }
    const originalIds = new Set((await engine.entities.rotations(id, 'local')).rotations.flatMap((r) => [...r.blocks_before, ...r.blocks_after].map((b) => b.id)));
    await engine.entities.rotate(copy.id, { action: 'undo' }, 'local');
    const window = await engine.entities.window(copy.id, 'local');
    expect(window.blocks.filter((b) => originalIds.has(b.id))).toEqual([]);
    engine.close();
  });

  it('a version 1 archive still imports; its turns say they cannot be rebuilt', async () => {
    const { clock, tick } = testClock();
    const engine = makeEngine(dir, { windowBudget: 120, clock });
    const id = await withHistory(engine, tick);
    const entries = readTar(await bytes(await engine.entities.export(id, 'tar', 'local'))).slice(0, 3);
    const manifest = JSON.parse(Buffer.from(entries[0].body).toString());
    manifest.version = 1;
    delete manifest.parts;
    entries[0] = { ...entries[0], body: Buffer.from(JSON.stringify(manifest)) };
    const v1 = Buffer.concat([...entries.flatMap((e) => [tarHeader(e.name, e.body.length, 0), e.body, tarPadding(e.body.length)]), tarTrailer()]);
    const copy = await engine.entities.import(v1, 'tar', {}, 'local');
    expect(copy.transcript.messages).toBe((await engine.entities.get(id, 'local')).transcript.messages);
    expect((await engine.entities.rotations(copy.id, 'local')).rotations).toEqual([]);
    await expect(engine.entities.windowAt(copy.id, '3', 'local')).rejects.toThrow(NotFoundError);
    await expect(engine.entities.windowAt(copy.id, '3', 'local')).rejects.toThrow(/cannot be rebuilt/);
    // New turns on the copy are recorded as usual.
    await collect(engine.entities.send(copy.id, { content: 'a new turn' }, 'local'));
    const seq = (await engine.entities.get(copy.id, 'local')).transcript.messages - 1;
    expect((await engine.entities.windowAt(copy.id, String(seq), 'local')).prompt.at(-1)).toEqual({ role: 'user', content: 'a new turn' });
    engine.close();
  });
});
