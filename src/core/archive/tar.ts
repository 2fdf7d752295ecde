/** A minimal ustar codec: enough to write and strictly read mgpt's export archive. Pure. */

export const TAR_BLOCK = 512;

const enc = new TextEncoder();
const dec = new TextDecoder();

function writeString(buf: Uint8Array, offset: number, length: number, value: string): void {
  const bytes = enc.encode(value);
  if (bytes.length > length) throw new Error(`tar field too long: ${value}`);
  buf.set(bytes, offset);
}

function writeOctal(buf: Uint8Array, offset: number, length: number, value: number): void {
  writeString(buf, offset, length, value.toString(8).padStart(length - 1, '0') + '\0');
}

/** One 512-byte header for a regular file. */
export function tarHeader(name: string, size: number, mtimeSeconds: number): Uint8Array {
  const h = new Uint8Array(TAR_BLOCK);
  writeString(h, 0, 100, name);
  writeOctal(h, 100, 8, 0o644);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, Math.floor(mtimeSeconds));
  h.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  h[156] = 0x30; // '0': regular file
  writeString(h, 257, 6, 'ustar\0');
  writeString(h, 263, 2, '00');
  writeString(h, 265, 32, 'mgpt');
  writeString(h, 297, 32, 'mgpt');
  writeString(h, 148, 8, checksum(h).toString(8).padStart(6, '0') + '\0 ');
  return h;
}

function checksum(h: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return sum;
}

/** Zero bytes that pad a file body of `size` bytes to a whole block. */
export function tarPadding(size: number): Uint8Array {
  return new Uint8Array((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
}

/** The two zero blocks that end an archive. */
export function tarTrailer(): Uint8Array {
  return new Uint8Array(TAR_BLOCK * 2);
}

export interface TarEntry {
  name: string;
  body: Uint8Array;
}

function readString(buf: Uint8Array, offset: number, length: number): string {
  const slice = buf.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return dec.decode(end === -1 ? slice : slice.subarray(0, end));
}

function readOctal(buf: Uint8Array, offset: number, length: number): number {
  const s = readString(buf, offset, length).trim();
  if (!/^[0-7]+$/.test(s)) throw new Error('bad number field in tar header');
  return parseInt(s, 8);
}

/**
 * Reads every regular file of an archive. Rejects anything it does not understand rather than
 * guessing: bad checksums, links, directories, absolute or `..` paths, truncation.
 */
export function readTar(bytes: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  let off = 0;
  for (;;) {
    if (off + TAR_BLOCK > bytes.length) throw new Error('archive is truncated (no end-of-archive marker)');
    const h = bytes.subarray(off, off + TAR_BLOCK);
    if (h.every((b) => b === 0)) return entries;
    const stored = readOctal(h, 148, 8);
    if (stored !== checksum(h)) throw new Error(`tar header checksum mismatch at byte ${off}`);
    const prefix = readString(h, 345, 155);
    const name = (prefix ? prefix + '/' : '') + readString(h, 0, 100);
    const type = String.fromCharCode(h[156] || 0x30);
    if (type !== '0') throw new Error(`archive entry ${JSON.stringify(name)} is not a regular file`);
    if (name.startsWith('/') || name.split(/[\\/]/).includes('..')) {
      throw new Error(`archive entry ${JSON.stringify(name)} has an unsafe path`);
    }
    const size = readOctal(h, 124, 12);
    const start = off + TAR_BLOCK;
    if (start + size > bytes.length) throw new Error(`archive is truncated inside ${JSON.stringify(name)}`);
    entries.push({ name, body: bytes.subarray(start, start + size) });
    off = start + size + ((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
  }
}
