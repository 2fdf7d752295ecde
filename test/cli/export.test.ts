import { afterAll, describe, expect, it } from 'vitest';
import { runExport } from '../../src/cli/commands/export.js';
import { BadRequestError } from '../../src/core/errors.js';
import { readTar } from '../../src/core/archive/tar.js';
import { testContext } from '../helpers/cli-context.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const engine = makeEngine(tempDir());
afterAll(() => engine.close());

describe('mgpt export without -o', () => {
  it('writes the tar archive to stdout when it is not a terminal, JSON with --format json', async () => {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
    await collect(engine.entities.send(id, { content: 'hello' }, 'local'));
    const piped = testContext(engine, false);
    await runExport(piped, 'ada', {});
    const files = readTar(piped.outBytes()).map((f) => f.name);
    expect(files).toEqual(['manifest.json', 'transcript.json', 'window.json', 'rotations.json', 'memory.json']);
    const json = testContext(engine, false);
    await runExport(json, 'ada', { format: 'json' });
    expect(JSON.parse(json.out()).manifest.entity.name).toBe('ada');
  });

  it('refuses to write a tar archive to a terminal, and says how to get it', async () => {
    const tty = testContext(engine, true);
    const err = await runExport(tty, 'ada', {}).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe('not writing a tar archive to a terminal');
    expect(err.hint).toBe('write it to a file (mgpt export ada -o ada.tar) or pipe it');
    expect(tty.out()).toBe('');
    // JSON is text: a terminal may have it.
    const text = testContext(engine, true);
    await runExport(text, 'ada', { format: 'json' });
    expect(JSON.parse(text.out()).transcript).toHaveLength(2);
  });
});

describe('mgpt export -o onto an existing file (issue 37, item 9)', () => {
  it('refuses without --force, with a hint, and leaves the file as it was; --force overwrites', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const file = join(tempDir(), 'ada.json');
    writeFileSync(file, 'old');
    const ctx = testContext(engine, false);
    const err = await runExport(ctx, 'ada', { output: file }).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect([err.message, err.exitCode, err.hint]).toEqual([`${file} already exists`, 2, `mgpt export ada -o ${file} --force overwrites it`]);
    expect(readFileSync(file, 'utf8')).toBe('old');
    await runExport(testContext(engine, false), 'ada', { output: file, force: true });
    expect(JSON.parse(readFileSync(file, 'utf8')).manifest.entity.name).toBe('ada');
  });
});

describe('mgpt search with no hits (issue 37, item 9)', () => {
  it('says so on stderr and exits 1, as grep; --json still prints the empty list', async () => {
    const { runSearch } = await import('../../src/cli/commands/search.js');
    const ctx = testContext(engine, false);
    await runSearch(ctx, 'zzqqxx', { limit: '20' });
    expect([ctx.exitCode, ctx.out(), ctx.err()]).toEqual([1, '', 'no matches for "zzqqxx"\n']);
    const json = testContext(engine, false);
    await runSearch(json, 'zzqqxx', { limit: '20', json: true });
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.out())).toMatchObject({ object: 'list', data: [] });
    const hit = testContext(engine, false);
    await runSearch(hit, 'hello', { limit: '20' });
    expect(hit.exitCode).toBe(0);
  });
});
