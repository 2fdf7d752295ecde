import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError } from '../../src/core/errors.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-resolve-');

describe('finding entities locally', () => {
  it('resolves names and id prefixes over all entities, past the newest 200, and pages the list', async () => {
    const engine = makeEngine(dir);
    const first = await engine.entities.create({ model: 'mgpt-1-27b', name: 'delme' }, 'local');
    for (let i = 0; i < 240; i++) await engine.entities.create({ model: 'mgpt-1-27b', name: `entity-${i}` }, 'local');
    expect((await engine.entities.list('local')).data).toHaveLength(200);
    expect((await engine.entities.list('local')).data.some((e) => e.id === first.id)).toBe(false);
    expect((await engine.entities.resolve('delme', 'local')).id).toBe(first.id);
    expect((await engine.entities.resolve(first.id.slice(0, 8), 'local')).id).toBe(first.id);
    const pages = await Promise.all([0, 100, 200].map(async (offset) => (await engine.entities.list('local', { limit: 100, offset })).data));
    expect(pages.map((p) => p.length)).toEqual([100, 100, 41]);
    expect(new Set(pages.flat().map((e) => e.id)).size).toBe(241);
    expect(pages[2].at(-1)!.id).toBe(first.id); // most recently active first: the oldest comes last
    // Fewer than 4 characters are never taken as an id prefix.
    await expect(() => engine.entities.resolve(first.id.slice(0, 3), 'local')).rejects.toThrow(NotFoundError);
    await expect(() => engine.entities.resolve('zzzz', 'local')).rejects.toThrow(NotFoundError);
    engine.close();
  });

  it('an id prefix two entities share lists both; one more character picks one', async () => {
    const ids = ['abcd1111-0000-4000-8000-000000000001', 'abcd2222-0000-4000-8000-000000000002'];
    const engine = makeEngine(dir, { newId: () => ids.shift() ?? crypto.randomUUID() });
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'one' }, 'local');
    await engine.entities.create({ model: 'mgpt-1-27b', name: 'two' }, 'local');
    const err = (await engine.entities.resolve('abcd', 'local').catch((e) => e)) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe('"abcd" names 2 entities');
    expect(err.hint).toBe('use a longer id prefix or the full id:\n  abcd2222  two\n  abcd1111  one');
    expect((await engine.entities.resolve('abcd2', 'local')).name).toBe('two');
    expect((await engine.entities.resolve('ABCD1', 'local')).name).toBe('one');
    engine.close();
  });
});

describe('finding universes, logs and keys locally', () => {
  it('takes a universe display name or id prefix, a log id prefix and a key id prefix', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const prompts = `${dir}/prompts`;
    mkdirSync(prompts, { recursive: true });
    writeFileSync(`${prompts}/narrator.md`, 'You narrate.\n');
    const engine = makeEngine(dir, { promptsDir: prompts });
    const a = (await engine.universes.create({ storedPrompt: 'narrator', displayName: 'Tuesday' })).universe;
    const b = (await engine.universes.create({ storedPrompt: 'narrator', displayName: 'Tuesday' })).universe;
    expect(await engine.universes.resolve(a.slice(0, 6))).toBe(a);
    expect(await engine.universes.resolve(a)).toBe(a);
    await expect(() => engine.universes.resolve('Tuesday')).rejects.toMatchObject({ code: 'bad_request', message: expect.stringContaining('"Tuesday" names 2 universes') });
    await expect(() => engine.universes.resolve('Wednesday')).rejects.toThrow(NotFoundError);
    expect(b).not.toBe(a);
    const res = await engine.respond({ model: 'game-1-lite-frozen', universe: a, userInput: 'hi' });
    const logId = res.requestLog.id;
    expect(await engine.logs.resolve(logId.slice(0, 5))).toBe(logId);
    const key = await engine.keys.create('local', ['mgpt.logs:read']);
    expect(await engine.keys.resolve(key.id.slice(0, 10))).toBe(key.id);
    await expect(() => engine.keys.resolve('key_zzzz')).rejects.toThrow(NotFoundError);
    engine.close();
  });
});
