import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError } from '../../src/core/errors.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-resolve-');

describe('finding entities locally', () => {
  it('resolves names and id prefixes over all entities, past the newest 200, and pages the list', async () => {
    const engine = makeEngine(dir);
    const first = await engine.entities.create({ model: 'mgpt-1-27b', name: 'delme' });
    for (let i = 0; i < 240; i++) await engine.entities.create({ model: 'mgpt-1-27b', name: `e${i}` });
    expect(engine.entities.list().data).toHaveLength(200);
    expect(engine.entities.list().data.some((e) => e.id === first.id)).toBe(false);
    expect(engine.entities.resolve('delme').id).toBe(first.id);
    expect(engine.entities.resolve(first.id.slice(0, 8)).id).toBe(first.id);
    const pages = [0, 100, 200].map((offset) => engine.entities.list('local', { limit: 100, offset }).data);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 41]);
    expect(new Set(pages.flat().map((e) => e.id)).size).toBe(241);
    expect(pages[2].at(-1)!.id).toBe(first.id); // most recently active first: the oldest comes last
    // Fewer than 4 characters are never taken as an id prefix.
    expect(() => engine.entities.resolve(first.id.slice(0, 3))).toThrow(NotFoundError);
    expect(() => engine.entities.resolve('zzzz')).toThrow(NotFoundError);
    engine.close();
  });

  it('an id prefix two entities share lists both; one more character picks one', async () => {
    const ids = ['abcd1111-0000-4000-8000-000000000001', 'abcd2222-0000-4000-8000-000000000002'];
    const engine = makeEngine(dir, { newId: () => ids.shift() ?? crypto.randomUUID() });
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'one' });
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'two' });
    const err = (() => {
      try {
        engine.entities.resolve('abcd');
      } catch (e) {
        return e as BadRequestError;
      }
    })()!;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe('"abcd" names 2 entities');
    expect(err.hint).toBe('use a longer id prefix or the full id:\n  abcd2222  two\n  abcd1111  one');
    expect(engine.entities.resolve('abcd2').name).toBe('two');
    expect(engine.entities.resolve('ABCD1').name).toBe('one');
    engine.close();
  });
});
