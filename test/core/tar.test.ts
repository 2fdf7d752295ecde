import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTar, tarHeader, tarPadding, tarTrailer } from '../../src/core/archive/tar.js';
import { tempDir } from '../helpers/temp.js';

const enc = new TextEncoder();

function archive(files: Array<[string, string]>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [name, text] of files) {
    const body = enc.encode(text);
    parts.push(tarHeader(name, body.length, 1_700_000_000), body, tarPadding(body.length));
  }
  parts.push(tarTrailer());
  return Buffer.concat(parts);
}

describe('tar codec', () => {
  const dir = tempDir();

  it('writes archives GNU tar reads, and reads what GNU tar writes', () => {
    const path = join(dir, 'a.tar');
    writeFileSync(path, archive([['a.json', '{"x":1}'], ['b.json', 'é'.repeat(600)]]));
    expect(execFileSync('tar', ['-tf', path], { encoding: 'utf8' }).trim().split('\n')).toEqual(['a.json', 'b.json']);
    expect(execFileSync('tar', ['-xOf', path, 'b.json'], { encoding: 'utf8' })).toBe('é'.repeat(600));

    writeFileSync(join(dir, 'c.txt'), 'from gnu tar');
    execFileSync('tar', ['--format=ustar', '-cf', join(dir, 'gnu.tar'), '-C', dir, 'c.txt']);
    const entries = readTar(readFileSync(join(dir, 'gnu.tar')));
    expect(entries.map((e) => [e.name, Buffer.from(e.body).toString()])).toEqual([['c.txt', 'from gnu tar']]);
  });

  it('rejects unsafe paths, truncation and corrupted headers', () => {
    expect(() => readTar(archive([['../evil.json', '{}']]))).toThrow(/unsafe path/);
    expect(() => readTar(archive([['/etc/passwd', 'x']]))).toThrow(/unsafe path/);
    const good = archive([['a.json', '{"x":1}']]);
    expect(() => readTar(good.subarray(0, 600))).toThrow(/truncated/);
    const bad = Uint8Array.from(good);
    bad[10] ^= 0xff;
    expect(() => readTar(bad)).toThrow(/checksum/);
  });
});
