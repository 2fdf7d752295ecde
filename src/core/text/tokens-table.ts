/**
 * o200k in a compact file: gpt-tokenizer's own BPE over its own ranks, with the rank lookups
 * served from one binary table instead of the 200,000-entry Map it builds at load.
 *
 * Why: loading gpt-tokenizer's o200k module compiles a 2.4 MB array literal and fills a Map, ~0.2 s
 * plus GC: most of what a one-shot `mgpt send` costs over bare node. The table (built from the same
 * ranks by scripts/build.mjs into dist/) is read in about a millisecond, and a lookup hashes the
 * piece and compares code units. Counting and truncating run gpt-tokenizer's unchanged algorithm,
 * so counts are exactly o200k's (test/core/tokens-table.test.ts compares them).
 *
 * The CLI loads this module as its own bundle (dist/tokenizer.cjs); it hands back only numbers and
 * strings, so no class crosses between bundles.
 */
import { readFileSync } from 'node:fs';
import { GptEncoding } from 'gpt-tokenizer/GptEncoding';

/** The ranks as gpt-tokenizer ships them: a string, or the bytes of a token that is not UTF-8. */
export type O200kRanks = readonly (string | readonly number[])[];
export type O200kEncoding = Pick<GptEncoding, 'countTokens' | 'encode' | 'decode'>;

const MAGIC = 0x6f326b74; // "o2kt"
const VERSION = 1;
const HEADER_WORDS = 8;

/** FNV-1a over UTF-16 code units. */
function hashUnits(units: { readonly length: number }, at: (i: number) => number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < units.length; i++) h = Math.imul(h ^ at(i), 16777619);
  return h >>> 0;
}

/** gpt-tokenizer's binary-search order for non-UTF-8 tokens: bytewise, then shorter first. */
function compareBytes(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * The table file for `ranks`. Layout (little-endian u32 words unless noted): header; per rank the
 * start of its string in the code-unit area (N + 1 offsets; a byte token has an empty string);
 * an open-addressing hash of the strings (slot = rank + 1, 0 = empty); the non-UTF-8 tokens
 * sorted as gpt-tokenizer searches them (rank, byte offset); then the code units (u16) and bytes.
 */
export function encodeO200kTable(ranks: O200kRanks): Uint8Array {
  const n = ranks.length;
  let slotCount = 1;
  while (slotCount < n * 2) slotCount *= 2;
  const offsets = new Uint32Array(n + 1);
  let units = 0;
  const binary: { rank: number; bytes: readonly number[] }[] = [];
  ranks.forEach((value, rank) => {
    offsets[rank] = units;
    if (typeof value === 'string') units += value.length;
    else binary.push({ rank, bytes: value });
  });
  offsets[n] = units;
  binary.sort((a, b) => compareBytes(a.bytes, b.bytes));
  const binaryBytes = binary.reduce((sum, b) => sum + b.bytes.length, 0);

  const words = HEADER_WORDS + (n + 1) + slotCount + binary.length * 2 + 1;
  const unitsBytes = Math.ceil((units * 2) / 4) * 4;
  const out = new Uint8Array(words * 4 + unitsBytes + binaryBytes);
  const u32 = new Uint32Array(out.buffer, 0, words);
  u32.set([MAGIC, VERSION, n, slotCount, units, binary.length, binaryBytes, 0]);
  u32.set(offsets, HEADER_WORDS);
  const slotsAt = HEADER_WORDS + n + 1;
  ranks.forEach((value, rank) => {
    if (typeof value !== 'string') return;
    let slot = hashUnits(value, (i) => value.charCodeAt(i)) & (slotCount - 1);
    while (u32[slotsAt + slot] !== 0) slot = (slot + 1) & (slotCount - 1);
    u32[slotsAt + slot] = rank + 1;
  });
  const binaryAt = slotsAt + slotCount;
  const u16 = new Uint16Array(out.buffer, words * 4, units);
  ranks.forEach((value, rank) => {
    if (typeof value === 'string') for (let i = 0; i < value.length; i++) u16[offsets[rank] + i] = value.charCodeAt(i);
  });
  let byteAt = 0;
  binary.forEach((b, i) => {
    u32[binaryAt + i * 2] = b.rank;
    u32[binaryAt + i * 2 + 1] = byteAt;
    out.set(b.bytes, words * 4 + unitsBytes + byteAt);
    byteAt += b.bytes.length;
  });
  u32[binaryAt + binary.length * 2] = byteAt;
  return out;
}

/** The string-to-rank lookup gpt-tokenizer's core calls (`.get`), served from the table. */
class RankLookup {
  constructor(
    private readonly offsets: Uint32Array,
    private readonly slots: Uint32Array,
    private readonly units: Uint16Array,
  ) {}

  get(key: string): number | undefined {
    const mask = this.slots.length - 1;
    for (let slot = hashUnits(key, (i) => key.charCodeAt(i)) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry === 0) return undefined;
      const rank = entry - 1;
      const start = this.offsets[rank];
      if (this.offsets[rank + 1] - start === key.length && this.matches(start, key)) return rank;
    }
  }

  private matches(start: number, key: string): boolean {
    for (let i = 0; i < key.length; i++) if (this.units[start + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /** Every rank's value as gpt-tokenizer's decoder holds it (built only when decoding). */
  decoder(byteTokens: Map<number, Uint8Array>): (string | number[])[] {
    const values: (string | number[])[] = new Array(this.offsets.length - 1);
    for (let rank = 0; rank < values.length; rank++) {
      const bytes = byteTokens.get(rank);
      values[rank] = bytes ? [...bytes] : decodeUnits(this.units.subarray(this.offsets[rank], this.offsets[rank + 1]));
    }
    return values;
  }
}

function decodeUnits(units: Uint16Array): string {
  let s = '';
  for (let i = 0; i < units.length; i += 4096) s += String.fromCharCode(...units.subarray(i, i + 4096));
  return s;
}

/** The fields of gpt-tokenizer's BytePairEncodingCore this module serves; checked before use. */
interface CoreLookups {
  mergeableBytePairRankCount: number;
  bytePairRankDecoder: unknown;
  bytePairStringRankEncoder: unknown;
  bytePairNonUtfSortedEncoder: unknown;
  bytePairNonUtfRankDecoder: unknown;
}

/** o200k over a table made by encodeO200kTable. */
export function o200kFromTable(file: Uint8Array): O200kEncoding {
  const bytes = file.byteOffset % 4 === 0 ? file : file.slice();
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS);
  const [magic, version, n, slotCount, unitCount, binaryCount, binaryBytes] = header;
  if (magic !== MAGIC || version !== VERSION) throw new Error('o200k table: not a table of this version');
  const words = HEADER_WORDS + (n + 1) + slotCount + binaryCount * 2 + 1;
  const unitsBytes = Math.ceil((unitCount * 2) / 4) * 4;
  if (bytes.byteLength !== words * 4 + unitsBytes + binaryBytes) throw new Error('o200k table: truncated');
  const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  const offsets = u32.subarray(HEADER_WORDS, HEADER_WORDS + n + 1);
  const slotsAt = HEADER_WORDS + n + 1;
  const lookup = new RankLookup(offsets, u32.subarray(slotsAt, slotsAt + slotCount), new Uint16Array(bytes.buffer, bytes.byteOffset + words * 4, unitCount));
  const binaryAt = slotsAt + slotCount;
  const byteArea = bytes.subarray(words * 4 + unitsBytes);
  const sorted: [Uint8Array, number][] = [];
  const byRank = new Map<number, Uint8Array>();
  for (let i = 0; i < binaryCount; i++) {
    const end = i + 1 < binaryCount ? u32[binaryAt + i * 2 + 3] : u32[binaryAt + binaryCount * 2];
    const token = byteArea.subarray(u32[binaryAt + i * 2 + 1], end);
    sorted.push([token, u32[binaryAt + i * 2]]);
    byRank.set(u32[binaryAt + i * 2], token);
  }

  const encoding = GptEncoding.getEncodingApi('o200k_base', () => []);
  const core = (encoding as unknown as { bytePairEncodingCoreProcessor: CoreLookups }).bytePairEncodingCoreProcessor;
  for (const field of ['mergeableBytePairRankCount', 'bytePairRankDecoder', 'bytePairStringRankEncoder', 'bytePairNonUtfSortedEncoder', 'bytePairNonUtfRankDecoder'] as const) {
    if (!(field in core)) throw new Error(`o200k table: gpt-tokenizer has no ${field} any more`);
  }
  core.mergeableBytePairRankCount = n;
  core.bytePairStringRankEncoder = lookup;
  core.bytePairNonUtfSortedEncoder = sorted;
  core.bytePairNonUtfRankDecoder = byRank;
  let decoder: (string | number[])[] | undefined;
  Object.defineProperty(core, 'bytePairRankDecoder', { get: () => (decoder ??= lookup.decoder(byRank)) });
  return encoding;
}

/** o200k from the table file at `url`, or undefined when there is no such file. */
export function openO200kTable(url: URL): O200kEncoding | undefined {
  let file: Buffer;
  try {
    file = readFileSync(url);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return o200kFromTable(file);
}
