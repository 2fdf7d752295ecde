import { openSync, closeSync, writeSync, ftruncateSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { zipEntryStream } from '../../../src/engine/imports/zip-entry.js';
import { bytes } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/temp.js';

// Hostile zips get the reader's own clear error (a 400 / exit 2), never a RangeError or a read without end.
const dir = tempDir('mgpt-zip-');
let n = 0;

interface Entry {
  name: string;
  data: Buffer;
  deflate?: boolean;
  /** Replaces the central entry's compressed size (0xffffffff: "in the zip64 field"). */
  centralSize?: number;
  extra?: Buffer;
}

/** A zip file of `entries`, written as a zip tool writes one (CRCs are not checked by the reader, so 0). */
function zip(entries: Entry[]): string {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = e.deflate ? deflateRawSync(e.data) : e.data;
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const extra = e.extra ?? Buffer.alloc(0);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.deflate ? 8 : 0, 10);
    central.writeUInt32LE(e.centralSize ?? data.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name, extra);
    offset += 30 + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const file = join(dir, `z${n++}.zip`);
  writeFileSync(file, Buffer.concat([...locals, cd, eocd(entries.length, cd.length, offset)]));
  return file;
}

function eocd(count: number, cdSize: number, cdOffset: number): Buffer {
  const b = Buffer.alloc(22);
  b.writeUInt32LE(0x06054b50, 0);
  b.writeUInt16LE(count, 8);
  b.writeUInt16LE(count, 10);
  b.writeUInt32LE(cdSize, 12);
  b.writeUInt32LE(cdOffset, 16);
  return b;
}

const read = async (file: string) => (await bytes(await zipEntryStream(file, 'conversations.json'))).toString();

describe('zipEntryStream', () => {
  it('reads a stored and a deflated entry', async () => {
    expect(await read(zip([{ name: 'conversations.json', data: Buffer.from('[1]') }]))).toBe('[1]');
    expect(await read(zip([{ name: 'x/conversations.json', data: Buffer.from('[2]'), deflate: true }]))).toBe('[2]');
  });

  it('a zip64 field shorter than the sizes it must hold is damage, named, not a RangeError', async () => {
    const extra = Buffer.from([0x01, 0x00, 0x04, 0x00, 0, 0, 0, 0]);
    const file = zip([{ name: 'conversations.json', data: Buffer.from('[1]'), centralSize: 0xffffffff, extra }]);
    await expect(read(file)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/central directory is damaged at byte \d+: its zip64 field is too short/) });
  });

  it('an end record cut short at the end of the file is damage, named', async () => {
    const file = join(dir, 'cut.zip');
    writeFileSync(file, Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(20), Buffer.from([0x50, 0x4b, 0x05, 0x06, 0, 0])]));
    await expect(read(file)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/no end of central directory/) });
  });

  it('refuses a central directory over 64 MB before reading it', async () => {
    // A sparse file of 70 MB whose end record claims a central directory of 66 MB.
    const file = join(dir, 'big-cd.zip');
    const fd = openSync(file, 'w');
    const size = 70 * 1024 * 1024;
    ftruncateSync(fd, size - 22);
    writeSync(fd, eocd(1, 66 * 1024 * 1024, 1024), 0, 22, size - 22);
    closeSync(fd);
    await expect(read(file)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/central directory is 69206016 bytes, over 67108864/) });
  });

  it('stops inflating a zip bomb past its cap, with a clear error', async () => {
    // 80 MB of zeros deflate to some 80 KB: far over 200 times its size, and over the 64 MB floor.
    const file = zip([{ name: 'conversations.json', data: Buffer.alloc(80 * 1024 * 1024), deflate: true }]);
    await expect(read(file)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/conversations.json inflates to over 67108864 bytes/) });
  });

  it('refuses an entry whose header claims more compressed bytes than the file holds, before inflating anything', async () => {
    // 300 MB of zeros deflate to some 300 KB; the header claims 0xFFFFFFF0 of them, so a cap of 200
    // times the claimed size would let all 300 MB through.
    const file = zip([{ name: 'conversations.json', data: Buffer.alloc(300 * 1024 * 1024), deflate: true, centralSize: 0xfffffff0 }]);
    await expect(read(file)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/conversations.json claims 4294967280 compressed bytes, but only \d+ lie between its start and the central directory/) });
  });

  it('a zip64 size or offset of 2^60 is damage, named, not a RangeError', async () => {
    const u64 = (v: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(v);
      return b;
    };
    const field = (...values: bigint[]) => Buffer.concat([Buffer.from([0x01, 0x00, 8 * values.length, 0x00]), ...values.map(u64)]);
    const size = zip([{ name: 'conversations.json', data: Buffer.from('[1]'), centralSize: 0xffffffff, extra: field(2n ** 60n) }]);
    await expect(read(size)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/conversations.json claims 115292150460684\d{4} compressed bytes, but only 3 lie/) });
    // The local header's offset in the zip64 field too: the central entry says 0xffffffff for it.
    const offset = zip([{ name: 'conversations.json', data: Buffer.from('[1]'), extra: field(2n ** 60n) }]);
    const bytes = readFileSync(offset);
    const central = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(0xffffffff, central + 42);
    writeFileSync(offset, bytes);
    await expect(read(offset)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/its header is said to be at byte 115292150460684\d{4}, past the entries/) });
  });
});
