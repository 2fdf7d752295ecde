import { BadRequestError } from '../../core/errors.js';
import { firstJsonError } from './json-locate.js';

/** One value of the top-level array, with the byte range it came from. */
export interface StreamedValue {
  value: unknown;
  offset: number;
  end: number;
}

/** One value's bytes, not yet parsed: its number in the array (from 1) and where it starts. */
export interface RawValue {
  bytes: Buffer;
  offset: number;
  end: number;
  count: number;
}

/** A single conversation bigger than this is refused rather than held: memory stays bounded. */
export const MAX_VALUE_BYTES = 64 * 1024 * 1024;

const enum State {
  Start,
  BeforeValue,
  FirstValue,
  InValue,
  AfterValue,
  Done,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const dec = new TextDecoder('utf-8', { fatal: true });
const HINT = 'the export may be cut short or damaged: download it again; nothing was imported from this point on';

/**
 * Reads a JSON document whose top level is an array of objects (or one object) and yields each
 * object as soon as its bytes are in, so a 1 GB export is read in the memory of its largest
 * conversation. The scanner only finds where each object ends (strings and brackets); JSON.parse
 * checks the object itself. Any error names the byte offset where the input broke.
 */
export async function* streamJsonArray(chunks: AsyncIterable<Uint8Array>, what: string): AsyncGenerator<StreamedValue> {
  for await (const raw of streamJsonValues(chunks, what)) yield { value: parseJsonValue(raw, what), offset: raw.offset, end: raw.end };
}

/** The values of the array as bytes, each whole, for the caller to parse where it likes (a large one off the event loop). */
export async function* streamJsonValues(chunks: AsyncIterable<Uint8Array>, what: string): AsyncGenerator<RawValue> {
  const s = new ArrayScanner(what, false);
  for await (const chunk of chunks) yield* s.push(asBuffer(chunk));
  s.finish();
}

/**
 * How many values the array holds, counting no further than `max + 1`: the values are only
 * scanned, never kept or parsed, so this costs a read of the bytes and no memory.
 */
export async function countJsonValues(chunks: AsyncIterable<Uint8Array>, what: string, max: number): Promise<number> {
  const s = new ArrayScanner(what, true);
  for await (const chunk of chunks) {
    s.push(asBuffer(chunk));
    if (s.values > max) return s.values;
  }
  s.finish();
  return s.values;
}

/** A value's bytes as JSON; bad UTF-8 or JSON is an error naming the byte where it broke. */
export function parseJsonValue(raw: RawValue, what: string): unknown {
  let text: string;
  try {
    text = dec.decode(raw.bytes);
  } catch {
    throw failure(what, raw.offset, `conversation ${raw.count} is not valid UTF-8`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = raw.offset + Buffer.byteLength(text.slice(0, firstJsonError(text)));
    throw failure(what, at, `conversation ${raw.count} is not valid JSON (${(err as Error).message})`);
  }
}

function failure(what: string, at: number, message: string, hint = HINT): BadRequestError {
  return new BadRequestError(`${what}: ${message} (at byte ${at})`, { hint });
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

class ArrayScanner {
  private state = State.Start;
  private base = 0;
  private depth = 0;
  private inString = false;
  /** A backslash ended the last chunk: the next byte is escaped. */
  private escaped = false;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private valueStart = 0;
  private single = false;
  private count = 0;
  /** The next backslash at or after where the scan is, in the current chunk (-1: none): searched once, not per string. */
  private nextBackslash = -1;
  private backslashFrom = Infinity;

  constructor(
    private readonly what: string,
    /** Only count the values: their bytes are neither kept nor parsed. */
    private readonly countOnly: boolean,
  ) {}

  get values(): number {
    return this.count;
  }

  push(chunk: Buffer): RawValue[] {
    const out: RawValue[] = [];
    let i = 0;
    this.backslashFrom = Infinity;
    while (i < chunk.length) {
      if (this.state === State.InValue) {
        const end = this.scanValue(chunk, i);
        if (end < 0) {
          this.keep(chunk.subarray(i));
          i = chunk.length;
        } else {
          this.keep(chunk.subarray(i, end + 1));
          const v = this.endValue(end + 1);
          if (!this.countOnly) out.push(v);
          i = end + 1;
        }
      } else {
        i = this.between(chunk, i);
      }
    }
    this.base += chunk.length;
    return out;
  }

  /** The input ended: anything but a closed document is a truncation. */
  finish(): void {
    if (this.state === State.Done) return;
    if (this.state === State.Start) this.fail(this.base, 'the file is empty');
    const inside = this.state === State.InValue ? ` inside conversation ${this.count + 1} (which starts at byte ${this.valueStart})` : '';
    this.fail(this.base, `the file ends early${inside}: it is truncated`);
  }

  /** Whitespace and punctuation between values; returns where scanning goes on. */
  private between(chunk: Buffer, i: number): number {
    const b = chunk[i];
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) return i + 1;
    const at = this.base + i;
    if (this.state === State.Start) {
      if (b === 0x5b) return (this.state = State.FirstValue), i + 1;
      if (b === 0x7b) return (this.single = true), this.open(i);
      if (at < 3 && b === [0xef, 0xbb, 0xbf][at]) return i + 1; // a UTF-8 byte order mark
      this.fail(at, 'expected a JSON array of conversations');
    }
    if (this.state === State.FirstValue && b === 0x5d) return (this.state = State.Done), i + 1;
    if (this.state === State.BeforeValue || this.state === State.FirstValue) {
      if (b === 0x7b) return this.open(i);
      this.fail(at, `expected a conversation (a JSON object), found ${describe(b)}`);
    }
    if (this.state === State.AfterValue) {
      if (b === 0x2c) return (this.state = State.BeforeValue), i + 1;
      if (b === 0x5d) return (this.state = State.Done), i + 1;
      this.fail(at, `expected , or ] after conversation ${this.count}, found ${describe(b)}`);
    }
    this.fail(at, `unexpected ${describe(b)} after the end of the document`);
  }

  private open(i: number): number {
    this.state = State.InValue;
    this.valueStart = this.base + i;
    this.depth = 0;
    return i;
  }

  /** The index of the byte that closes the value, or -1 when it goes on past the chunk. */
  private scanValue(chunk: Buffer, from: number): number {
    let i = from;
    const n = chunk.length;
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    while (i < n) {
      if (this.inString) {
        const q = chunk.indexOf(QUOTE, i);
        const bs = this.backslashAt(chunk, i);
        if (bs >= 0 && (q < 0 || bs < q)) {
          if (bs + 1 >= n) {
            this.escaped = true;
            return -1;
          }
          i = bs + 2;
          continue;
        }
        if (q < 0) return -1;
        this.inString = false;
        i = q + 1;
        continue;
      }
      const b = chunk[i];
      if (b === QUOTE) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if ((b === 0x7d || b === 0x5d) && --this.depth === 0) return i;
      i++;
    }
    return -1;
  }

  private backslashAt(chunk: Buffer, i: number): number {
    if (i < this.backslashFrom || (this.nextBackslash >= 0 && this.nextBackslash < i)) {
      this.nextBackslash = chunk.indexOf(BACKSLASH, i);
      this.backslashFrom = i;
    }
    return this.nextBackslash;
  }

  private keep(part: Buffer): void {
    if (this.countOnly) return;
    this.partBytes += part.length;
    if (this.partBytes > MAX_VALUE_BYTES) {
      this.fail(this.valueStart, `conversation ${this.count + 1} is larger than ${MAX_VALUE_BYTES / 1024 / 1024} MB`, 'a conversation that large is not a chat export: check the file; the conversations before it were imported');
    }
    this.parts.push(part);
  }

  private endValue(endInChunk: number): RawValue {
    // A small value within one chunk stays a view of it; any other is copied into a buffer of its
    // own, which the reader may hand to a worker thread (reader-pool.ts) without the chunk.
    const bytes = this.parts.length === 1 && this.partBytes < 1 << 16 ? this.parts[0] : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    this.count++;
    this.state = this.single ? State.Done : State.AfterValue;
    return { bytes, offset: this.valueStart, end: this.base + endInChunk, count: this.count };
  }

  private fail(at: number, message: string, hint = HINT): never {
    throw failure(this.what, at, message, hint);
  }
}

function describe(b: number): string {
  return b >= 0x20 && b < 0x7f ? JSON.stringify(String.fromCharCode(b)) : `byte 0x${b.toString(16).padStart(2, '0')}`;
}
