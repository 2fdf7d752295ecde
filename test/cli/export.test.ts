import { afterAll, describe, expect, it } from 'vitest';
import { runExport } from '../../src/cli/commands/export.js';
import { BadRequestError } from '../../src/core/errors.js';
import { readTar } from '../../src/core/tar.js';
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
    expect(files).toEqual(['manifest.json', 'transcript.json', 'window.json']);
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
