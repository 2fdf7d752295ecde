import { describe, expect, it } from 'vitest';
import { streamJsonArray } from '../../../src/engine/imports/json-stream.js';

/** The bytes in pieces of `size`, as a file or socket would hand them over. */
async function* pieces(text: string | Buffer, size: number): AsyncGenerator<Uint8Array> {
  const b = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

async function values(text: string | Buffer, size: number): Promise<Array<{ value: unknown; offset: number }>> {
  const out = [];
  for await (const v of streamJsonArray(pieces(text, size), 'the export')) out.push({ value: v.value, offset: v.offset });
  return out;
}

describe('streamJsonArray', () => {
  const doc = '\ufeff[ {"a": "x\\"}]{[\\\\", "b": [1, {"c": "ü\\u00fc"}]},\n {"d": "日本"} ]\n';

  it('yields each object with its byte offset, whatever the chunk size (escapes and UTF-8 split across chunks)', async () => {
    const expected = [
      { value: { a: 'x"}]{[\\', b: [1, { c: 'üü' }] }, offset: 5 },
      { value: { d: '日本' }, offset: Buffer.byteLength(doc.slice(0, doc.indexOf('{"d"'))) },
    ];
    for (const size of [1, 2, 3, 5, 7, 64, 4096]) expect(await values(doc, size)).toEqual(expected);
  });

  it('takes one object at the top level as one conversation, and an empty array as none', async () => {
    expect(await values('{"x": 1}', 3)).toEqual([{ value: { x: 1 }, offset: 0 }]);
    expect(await values(' [ ] ', 2)).toEqual([]);
  });

  it('names the byte where the input breaks', async () => {
    await expect(values('[{"a": 1}, {"b": 2', 4)).rejects.toThrow('the export: the file ends early inside conversation 2 (which starts at byte 11): it is truncated (at byte 18)');
    await expect(values('[{"a": 1} {"b": 2}]', 4)).rejects.toThrow('expected , or ] after conversation 1, found "{" (at byte 10)');
    await expect(values('[{"a": 1}, 7]', 4)).rejects.toThrow('expected a conversation (a JSON object), found "7" (at byte 11)');
    await expect(values('[{"é": tru}]', 4)).rejects.toThrow(/conversation 1 is not valid JSON .*\(at byte 8\)/);
    await expect(values('[{"a": 1}] x', 4)).rejects.toThrow('unexpected "x" after the end of the document (at byte 11)');
    await expect(values('', 4)).rejects.toThrow('the file is empty (at byte 0)');
    await expect(values(Buffer.from([0x5b, 0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d, 0x5d]), 4)).rejects.toThrow('conversation 1 is not valid UTF-8 (at byte 1)');
  });

  it('refuses a conversation over 64 MB, naming it and where it starts, before holding more of it', async () => {
    async function* huge(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('[{"a": 1}, {"t": "');
      const mb = Buffer.alloc(1024 * 1024, 0x78);
      for (let i = 0; i < 70; i++) yield mb;
      yield Buffer.from('"}]');
    }
    const read = async () => {
      for await (const _ of streamJsonArray(huge(), 'the export')) void _;
    };
    await expect(read()).rejects.toThrow('the export: conversation 2 is larger than 64 MB (at byte 11)');
  });

  it('names the byte where JSON nested 200,000 deep breaks, without running out of stack', async () => {
    const depth = 200_000;
    // Balanced brackets, so the scanner hands the value over whole; a "}" closes the innermost "[".
    const doc = `[{"a": ${'['.repeat(depth)}${']'.repeat(depth - 1)}}}]`;
    await expect(values(doc, 65_536)).rejects.toThrow(`conversation 1 is not valid JSON`);
    await expect(values(doc, 65_536)).rejects.toThrow(`(at byte ${7 + 2 * depth - 1})`);
  });
});
