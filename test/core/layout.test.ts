import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The tree is one folder per concern (docs/development.md#layout): the engine's top level holds its
// entry points and the seams its services share, and small utilities live in a folder of their own.
const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const MAX_ENGINE_TOP = 8;
const MAX_FILE_LINES = 400;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('the source layout', () => {
  it(`keeps at most ${MAX_ENGINE_TOP} files at the top of src/engine/`, () => {
    const top = readdirSync(join(SRC, 'engine'), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(top.length, top.join(', ')).toBeLessThanOrEqual(MAX_ENGINE_TOP);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files(SRC)
      .map((f) => ({ f: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((x) => x.lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });
});
