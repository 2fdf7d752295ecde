/**
 * The worst case for a search's snippets (issue 31, finding 4), shared by the load test and the
 * bench: hits of ~0.4 MB whose every word matches a query of 250 prefixes.
 */

/** 250 two-letter prefixes. */
export const PREFIXES = Array.from({ length: 250 }, (_, i) => String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26)));
/** Every prefix as `ab*`: a 999-character query, under search's limit of 1,000. */
export const MANY_PREFIXES = PREFIXES.map((p) => `${p}*`).join(' ');

/** ~0.4 MB of words, every one matching a prefix, and `harbour` every tenth word. */
export function largeMessage(seed: number): string {
  const words: string[] = [];
  for (let i = 0, k = seed, size = 0; size < 400_000; i++) {
    const w = i % 10 === 9 ? 'harbour' : `${PREFIXES[k++ % PREFIXES.length]}${'lorem'.slice(0, 1 + (i % 5))}`;
    words.push(w);
    size += w.length + 1;
  }
  return words.join(' ');
}
