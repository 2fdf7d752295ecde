// Token counting: a 400,000-character run of one letter against as much ordinary prose, and prose
// against o200k's own unsplit count. Runs alone too: node --import tsx bench/tokens.ts [--quick]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { loadTokenEstimator } from '../src/core/text/tokens.js';

export interface TokensBench {
  /** Medians, in ms, of counting 400,000 characters. */
  proseMs: number;
  proseUnsplitMs: number;
  letterRunMs: number;
  /** Random lowercase letters: no merge is cached, so this is the dearest run per character. */
  randomRunMs: number;
}

const LENGTH = 400_000;
/** As the estimator counts: special-token markers in the text are plain characters. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const unsplitCount = (text: string) => countTokens(text, AS_TEXT);

/** The repository's own README and docs (the CLI reference last), repeated to LENGTH characters. */
function prose(root: string): string {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md') && f !== 'cli.md').sort().map((f) => `docs/${f}`);
  const text = ['README.md', ...docs, 'docs/cli.md'].map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
  return text.repeat(Math.ceil(LENGTH / text.length)).slice(0, LENGTH);
}

function ms(f: () => unknown): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

/** Lowercase letters from a Park-Miller generator: a new seed makes a text no cache has seen. */
function randomLetters(n: number, seed: number): string {
  let x = seed;
  return Array.from({ length: n }, () => String.fromCharCode(97 + ((x = (x * 48271) % 2147483647) % 26))).join('');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Interleaves the three counts so load noise hits each; the first rounds warm the JIT and caches. */
export async function benchTokens(root: string, quick: boolean): Promise<TokensBench> {
  const tok = await loadTokenEstimator();
  const text = prose(root);
  const run = 'a'.repeat(LENGTH);
  if (tok.count(text) !== unsplitCount(text)) throw new Error('prose counts differ from o200k');
  const rounds = quick ? 7 : 21;
  const times = { prose: [] as number[], unsplit: [] as number[], run: [] as number[] };
  for (let i = 0; i < rounds + 3; i++) {
    const unsplit = ms(() => unsplitCount(text));
    const bounded = ms(() => tok.count(text));
    const letters = ms(() => tok.count(run));
    if (i < 3) continue;
    times.unsplit.push(unsplit);
    times.prose.push(bounded);
    times.run.push(letters);
  }
  const randomRun = [1, 2, 3].map((seed) => randomLetters(LENGTH, seed)).map((random) => ms(() => tok.count(random)));
  return { proseMs: median(times.prose), proseUnsplitMs: median(times.unsplit), letterRunMs: median(times.run), randomRunMs: median(randomRun) };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await benchTokens(fileURLToPath(new URL('..', import.meta.url)), process.argv.includes('--quick')));
}
