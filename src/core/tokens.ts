/**
 * The one token estimator of the engine: o200k BPE (gpt-tokenizer), loaded lazily because its
 * tables take a few hundred milliseconds to load. Every stored message and block keeps its count,
 * so nothing is ever re-tokenized.
 */

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

export function loadTokenEstimator(): Promise<TokenEstimator> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((bpe) => (loaded = {
    count: (text: string) => (text.length === 0 ? 0 : bpe.countTokens(text)),
    truncate: (text: string, maxTokens: number) => {
      if (maxTokens <= 0) return '';
      const ids = bpe.encode(text);
      return ids.length <= maxTokens ? text : bpe.decode(ids.slice(0, maxTokens));
    },
  }));
  return loading;
}
