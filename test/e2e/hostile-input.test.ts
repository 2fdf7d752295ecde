import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tarHeader } from '../../src/core/tar.js';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** The real binary fed hostile files, names and environments. */
const dir = tempDir();
const env = cliEnv(dir);

describe('import reads a bounded amount', () => {
  it('mgpt import /dev/zero stops at the 64 MiB an export can be, with a clear error', async () => {
    const r = await mgpt(['import', '/dev/zero'], env);
    expect(r.stderr).toMatch(/^error: import: the export is larger than 64 MiB, the most an export can be\nhint: /);
    expect(r.code).toBe(2);
    expect((await mgpt(['entities', 'list', '--json'], env)).stdout).toMatch(/"data": \[\]/);
  });

  it('a tar header that claims a huge member is refused, not allocated', async () => {
    const file = join(dir, 'huge.tar');
    writeFileSync(file, Buffer.concat([tarHeader('manifest.json', 8 * 1024 ** 3 - 1, 0), Buffer.alloc(512)]));
    const r = await mgpt(['import', file], env);
    expect(r.stderr).toMatch(/^error: import: not a valid export archive: archive is truncated inside "manifest.json"/);
    expect(r.code).toBe(2);
  });
});
