import { describe, expect, it } from 'vitest';
import { parseSearch, snippetOf } from '../../src/core/search-query.js';

describe('the search query language', () => {
  it('reads words, "phrases" and prefix* words, and never fails on ordinary text', () => {
    expect(parseSearch('Zanzibar42 "the Secret word" deploy*').clauses).toEqual([
      { kind: 'word', word: 'zanzibar42' },
      { kind: 'phrase', words: ['the', 'secret', 'word'] },
      { kind: 'prefix', word: 'deploy' },
    ]);
    // Punctuation splits words as the stores' tokenizers do; a lone quote or star is nothing.
    expect(parseSearch(`don't AND (x OR y) "unclosed phrase`).clauses).toEqual([
      { kind: 'phrase', words: ['don', 't'] },
      { kind: 'word', word: 'and' },
      { kind: 'word', word: 'x' },
      { kind: 'word', word: 'or' },
      { kind: 'word', word: 'y' },
      { kind: 'phrase', words: ['unclosed', 'phrase'] },
    ]);
    expect(parseSearch('" * : - "').clauses).toEqual([]);
    expect(parseSearch('NEAR(a b) ^c a:b').clauses.map((c) => c.kind)).toEqual(['phrase', 'word', 'word', 'phrase']);
  });

  it('cuts a snippet around the first match at word boundaries and marks every match in it', () => {
    const text = `${'filler words here '.repeat(20)}the secret word is zanzibar42, and zanzibar again.${' more text'.repeat(20)}`;
    const s = snippetOf(text, parseSearch('zanzibar*'));
    expect(s.snippet.startsWith('…')).toBe(true);
    expect(s.snippet.endsWith('…')).toBe(true);
    expect(s.snippet.length).toBeLessThanOrEqual(164);
    expect(s.highlights.map(([a, b]) => s.snippet.slice(a, b))).toEqual(['zanzibar42', 'zanzibar']);
    const short = snippetOf('Kite\nflying', parseSearch('kite'));
    expect(short).toEqual({ snippet: 'Kite flying', highlights: [[0, 4]] });
  });
});
