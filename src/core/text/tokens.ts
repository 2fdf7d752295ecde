/**
 * The one token estimator of the engine: o200k BPE (gpt-tokenizer), loaded lazily; the built CLI
 * reads its ranks from a compact table (tokens-table.ts) instead of gpt-tokenizer's ~0.3 s module. Every stored message and block keeps its count,
 * so nothing is ever re-tokenized. Long runs are cut before BPE (boundedChunks), so counting and
 * truncating are linear in the text and no text can freeze the event loop.
 */

import { largeWork } from '../lane.js';

export interface TokenEstimator {
  count(text: string): number;
  /** The longest prefix of `text` that has at most `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

let loading: Promise<TokenEstimator> | undefined;
let loaded: TokenEstimator | undefined;

/** The estimator if it is already in memory, without waiting. */
export function loadedTokenEstimator(): TokenEstimator | undefined {
  return loaded;
}

/**
 * A bound that needs no tables: o200k is byte-level BPE, so every token covers at least one UTF-8
 * byte and a text never has more tokens than bytes.
 */
export function tokenUpperBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * BPE merging is quadratic in the length of one pretokenized piece, and o200k's pieces are runs of
 * letters, of punctuation or of whitespace: 400,000 times "a" is one piece and takes minutes. No
 * piece grows past a few runs, so cutting every run longer than this keeps the work linear.
 */
export const LONGEST_RUN = 128;

// Letters, punctuation and whitespace: disjoint classes (marks go with letters; digits are
// pretokenized three at a time, so they never make a long piece).
const LONG_RUN = new RegExp(`[\\p{L}\\p{M}]{${LONGEST_RUN + 1},}|[^\\s\\p{L}\\p{M}\\p{N}]{${LONGEST_RUN + 1},}|\\s{${LONGEST_RUN + 1},}`, 'gu');

/**
 * `text` cut into consecutive chunks in which no run is longer than LONGEST_RUN. Text without
 * such a run (all ordinary prose and code) stays one chunk, so it counts exactly as o200k does;
 * a cut run may count a token or so more than whole.
 */
export function boundedChunks(text: string): string[] {
  if (!hasLongRun(text)) return [text];
  const chunks: string[] = [];
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const end = run.index + run[0].length;
    for (let cut = codePointStart(text, run.index + LONGEST_RUN); cut < end; cut = codePointStart(text, cut + LONGEST_RUN)) {
      chunks.push(text.slice(from, cut));
      from = cut;
    }
  }
  chunks.push(text.slice(from));
  return chunks;
}

/**
 * Whether `text` has more than LONGEST_RUN whitespace or non-whitespace characters in a row: a
 * cheap test that spares prose the Unicode scan. It looks at the far end of each window and steps
 * back to the last change, so in ordinary text it reads a few characters per window.
 */
function hasLongRun(text: string): boolean {
  for (let start = 0; start + LONGEST_RUN < text.length; ) {
    const end = start + LONGEST_RUN;
    const space = isSpace(text.charCodeAt(end));
    let change = end - 1;
    while (change >= start && isSpace(text.charCodeAt(change)) === space) change--;
    if (change < start) return true;
    start = change + 1; // no run of LONGEST_RUN + 1 can start at or before the change
  }
  return false;
}

/** Exactly the code units of the regex class `\s`. */
export function isSpace(unit: number): boolean {
  if (unit < 0xa0) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  return unit === 0xa0 || unit === 0x1680 || (unit >= 0x2000 && unit <= 0x200a) || unit === 0x2028 || unit === 0x2029
    || unit === 0x202f || unit === 0x205f || unit === 0x3000 || unit === 0xfeff;
}

/** `at`, or the index after it if `at` would split a surrogate pair. */
function codePointStart(text: string, at: number): number {
  const unit = text.charCodeAt(at);
  return unit >= 0xdc00 && unit <= 0xdfff ? at + 1 : at;
}

type O200k = import('./tokens-table.js').O200kEncoding;

/** The compact o200k table scripts/build.mjs writes beside the bundle; absent when running from src/. */
const O200K_TABLE = new URL('./o200k.table', import.meta.url);

/** o200k from the compact table when there is one (~5 ms), else gpt-tokenizer's own module (~0.3 s). */
async function loadO200k(): Promise<O200k> {
  const { openO200kTable } = await import('./tokens-table.js');
  return openO200kTable(O200K_TABLE) ?? (await import('gpt-tokenizer/encoding/o200k_base'));
}

/**
 * User text is text: a message that contains `<|endoftext|>` is counted as the characters it is.
 * (gpt-tokenizer's default throws on special tokens, which made such a message fail its turn.)
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The counts of the last texts counted (up to COUNTED_TEXTS of at most COUNTED_CHARS characters):
 * an OpenAI client sends its whole conversation with every request, so the same system prompt and
 * earlier messages are counted again and again, and the tokenizer's split costs tens of
 * microseconds a message (bench serve-llama). A count depends only on its text.
 */
const counted = new Map<string, number>();
const COUNTED_TEXTS = 256;
const COUNTED_CHARS = 4096;

function countRemembered(bpe: O200k, text: string): number {
  if (text.length > COUNTED_CHARS) return count(bpe, text);
  const known = counted.get(text);
  if (known !== undefined) {
    // Most recently used last, so the oldest goes first.
    counted.delete(text);
    counted.set(text, known);
    return known;
  }
  const n = count(bpe, text);
  counted.set(text, n);
  if (counted.size > COUNTED_TEXTS) counted.delete(counted.keys().next().value as string);
  return n;
}

function count(bpe: O200k, text: string): number {
  let tokens = 0;
  for (const chunk of boundedChunks(text)) tokens += bpe.countTokens(chunk, AS_TEXT);
  return tokens;
}

function truncate(bpe: O200k, text: string, maxTokens: number): string {
  let left = maxTokens;
  let kept = 0;
  for (const chunk of boundedChunks(text)) {
    if (left <= 0) break;
    const ids = bpe.encode(chunk, AS_TEXT);
    if (ids.length > left) return text.slice(0, kept) + bpe.decode(ids.slice(0, left));
    left -= ids.length;
    kept += chunk.length;
  }
  return text.slice(0, kept);
}

/** How long counting a batch may hold the thread before it lets other work (other requests) run. */
const COUNT_SLICE_MS = 10;

/**
 * Counts each text in slices of COUNT_SLICE_MS, each in the process's lane for large work (one
 * slice a turn of the event loop, whoever asks): a batch of thousands of messages (a branch's
 * history) never stalls a server's other requests, however many arrive together.
 */
export async function countEach(tok: TokenEstimator, texts: readonly string[]): Promise<number[]> {
  const out = new Array<number>(texts.length);
  let i = 0;
  const slice = async () => {
    const until = performance.now() + COUNT_SLICE_MS;
    for (; i < texts.length && performance.now() < until; i++) out[i] = tok.count(texts[i]);
  };
  while (i < texts.length) await largeWork.run(slice);
  return out;
}

export function loadTokenEstimator(): Promise<TokenEstimator> {
  loading ??= loadO200k().then((bpe) => (loaded = {
    count: (text: string) => (text.length === 0 ? 0 : countRemembered(bpe, text)),
    truncate: (text: string, maxTokens: number) => (maxTokens <= 0 ? '' : truncate(bpe, text, maxTokens)),
  }));
  return loading;
}
