import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import { BadRequestError } from '../../core/errors.js';

/** Where an entry of a zip file is, from its central directory. */
interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  localHeader: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX_U32 = 0xffffffff;
/** A central directory over this is not an export's (ChatGPT's lists a few thousand files): refused before it is read. */
export const MAX_CENTRAL_DIRECTORY = 64 * 1024 * 1024;
/** An entry may inflate to this many times its compressed size (JSON text compresses some 5-15 times)... */
export const MAX_INFLATE_RATIO = 200;
/** ...or to this, whichever is more: beyond both it is a zip bomb, not an export. */
export const MIN_INFLATE_CAP = 64 * 1024 * 1024;

/** Whether these first bytes are a zip file's. */
export function isZip(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/**
 * The bytes of the zip's `name` entry (at the top or in one folder, the shallowest), inflated as
 * they are read: an export's conversations.json is never held whole. Stored and deflated entries
 * are read, zip64 included (ChatGPT's exports); anything else is a clear error.
 */
export async function zipEntryStream(path: string, name: string): Promise<AsyncIterable<Uint8Array>> {
  const { entries, cdOffset } = await centralDirectory(path);
  const matches = entries.filter((e) => e.name === name || e.name.endsWith('/' + name)).sort((a, b) => a.name.length - b.name.length);
  const entry = matches[0];
  if (!entry) throw bad(`the zip holds no ${name}`, 'is this the export from ChatGPT or Claude? it holds conversations.json');
  if (entry.method !== 0 && entry.method !== 8) throw bad(`${entry.name} is compressed with method ${entry.method}, which mgpt cannot read`);
  if (entry.compressedSize < 1) throw bad(`${entry.name} in the zip is empty`);
  const start = await dataStart(path, entry, cdOffset);
  // The sizes come from the zip itself: one that claims more bytes than lie before the central
  // directory is lying, and the inflation cap below would be as large as its lie.
  if (start + entry.compressedSize > cdOffset) {
    throw bad(`${entry.name} claims ${entry.compressedSize} compressed bytes, but only ${Math.max(0, cdOffset - start)} lie between its start and the central directory: the zip is damaged or forged`);
  }
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  return entry.method === 0 ? raw : capped(raw.pipe(createInflateRaw()), entry, Math.max(MIN_INFLATE_CAP, entry.compressedSize * MAX_INFLATE_RATIO));
}

/** The inflated bytes, refused once they pass `cap`: a small hostile zip cannot make an import read without end. */
async function* capped(inflated: AsyncIterable<Uint8Array> & { destroy(): void }, entry: ZipEntry, cap: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  try {
    for await (const part of inflated) {
      total += part.length;
      if (total > cap) throw bad(`${entry.name} inflates to over ${cap} bytes from ${entry.compressedSize}: it is not an export (a zip bomb?)`, 'import the conversations.json from inside the zip, if it is a real export');
      yield part;
    }
  } finally {
    inflated.destroy();
  }
}

async function centralDirectory(path: string): Promise<{ entries: ZipEntry[]; cdOffset: number }> {
  const f = await open(path, 'r');
  try {
    const size = (await f.stat()).size;
    const tailLen = Math.min(size, 65_557);
    const tail = Buffer.alloc(tailLen);
    await f.read(tail, 0, tailLen, size - tailLen);
    const at = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (at < 0 || at + 22 > tail.length || tail.readUInt32LE(at) !== EOCD) throw bad('the zip has no end of central directory: it is truncated or damaged');
    let count = tail.readUInt16LE(at + 10);
    let cdSize = tail.readUInt32LE(at + 12);
    let cdOffset = tail.readUInt32LE(at + 16);
    if (cdOffset === MAX_U32 || cdSize === MAX_U32 || count === 0xffff) ({ count, cdSize, cdOffset } = await zip64End(f, size - tailLen + at));
    if (!Number.isSafeInteger(cdOffset + cdSize) || cdOffset + cdSize > size) throw bad(`the zip's central directory (at byte ${cdOffset}) lies past its end: it is truncated`);
    if (cdSize > MAX_CENTRAL_DIRECTORY) throw bad(`the zip's central directory is ${cdSize} bytes, over ${MAX_CENTRAL_DIRECTORY}: it is not an export`, 'import the conversations.json from inside the zip');
    const cd = Buffer.alloc(cdSize);
    await f.read(cd, 0, cdSize, cdOffset);
    return { entries: readEntries(cd, count, cdOffset), cdOffset };
  } finally {
    await f.close();
  }
}

async function zip64End(f: import('node:fs/promises').FileHandle, eocdAt: number): Promise<{ count: number; cdSize: number; cdOffset: number }> {
  const loc = Buffer.alloc(20);
  if (eocdAt >= 20) await f.read(loc, 0, 20, eocdAt - 20);
  if (loc.readUInt32LE(0) !== ZIP64_LOCATOR) throw bad('the zip64 end of central directory is missing');
  const rec = Buffer.alloc(56);
  const recAt = Number(loc.readBigUInt64LE(8));
  if (!Number.isSafeInteger(recAt) || recAt + 56 > eocdAt) throw bad('the zip64 end of central directory lies outside the file: it is damaged');
  await f.read(rec, 0, 56, recAt);
  return { count: Number(rec.readBigUInt64LE(32)), cdSize: Number(rec.readBigUInt64LE(40)), cdOffset: Number(rec.readBigUInt64LE(48)) };
}

function readEntries(cd: Buffer, count: number, cdOffset: number): ZipEntry[] {
  const out: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL) throw bad(`the zip's central directory is damaged at byte ${cdOffset + p}`);
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    if (p + 46 + nameLen + extraLen > cd.length) throw bad(`the zip's central directory is damaged at byte ${cdOffset + p}`);
    const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
    let compressedSize = cd.readUInt32LE(p + 20);
    const uncompressed = cd.readUInt32LE(p + 24);
    let localHeader = cd.readUInt32LE(p + 42);
    ({ compressedSize, localHeader } = zip64Sizes(cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen), uncompressed, compressedSize, localHeader, cdOffset + p));
    out.push({ name, method: cd.readUInt16LE(p + 10), compressedSize, localHeader });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/** zip64: the sizes and offset that did not fit live in extra field 0x0001, in this order; a field shorter than they need is damage. */
function zip64Sizes(extra: Buffer, uncompressed: number, compressedSize: number, localHeader: number, at: number): { compressedSize: number; localHeader: number } {
  for (let e = 0; e + 4 <= extra.length; e += 4 + extra.readUInt16LE(e + 2)) {
    if (extra.readUInt16LE(e) !== 1) continue;
    const end = Math.min(extra.length, e + 4 + extra.readUInt16LE(e + 2));
    let q = e + 4;
    const next = (): number => {
      if (q + 8 > end) throw bad(`the zip's central directory is damaged at byte ${at}: its zip64 field is too short`);
      const v = Number(extra.readBigUInt64LE(q));
      q += 8;
      return v;
    };
    if (uncompressed === MAX_U32) next();
    if (compressedSize === MAX_U32) compressedSize = next();
    if (localHeader === MAX_U32) localHeader = next();
  }
  return { compressedSize, localHeader };
}

/** Where the entry's data begins: after its local header, whose name and extra lengths may differ from the central copy. */
async function dataStart(path: string, e: ZipEntry, cdOffset: number): Promise<number> {
  if (e.localHeader + 30 > cdOffset) throw bad(`the zip's entry ${e.name} is damaged: its header is said to be at byte ${e.localHeader}, past the entries`);
  const f = await open(path, 'r');
  try {
    const h = Buffer.alloc(30);
    const { bytesRead } = await f.read(h, 0, 30, e.localHeader);
    if (bytesRead < 30 || h.readUInt32LE(0) !== LOCAL) throw bad(`the zip's entry ${e.name} is damaged (at byte ${e.localHeader})`);
    return e.localHeader + 30 + h.readUInt16LE(26) + h.readUInt16LE(28);
  } finally {
    await f.close();
  }
}

function bad(message: string, hint = 'download the export again'): BadRequestError {
  return new BadRequestError(`import: ${message}`, { hint });
}
