import { describe, expect, it, vi } from 'vitest';
import { SEARCH_QUERY_MAX_CHARS, parseSearch, snippetOf } from '../../src/core/text/search-query.js';
import { ftsMatch, tsQuery } from '../../src/store/search-syntax.js';

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

  it('bounds the clauses of a query at the limit: a clause said twice counts once, and the SQL stays small', () => {
    expect(parseSearch('kite KITE kite* "kite" kite*').clauses).toEqual([{ kind: 'word', word: 'kite' }, { kind: 'prefix', word: 'kite' }]);
    expect(parseSearch('ab '.repeat(SEARCH_QUERY_MAX_CHARS / 3)).clauses).toHaveLength(1);
    // The most clauses 1,000 characters can hold: one-letter words.
    const most = parseSearch(Array.from({ length: 500 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join(' ').slice(0, SEARCH_QUERY_MAX_CHARS));
    expect(most.clauses).toHaveLength(500);
    expect(ftsMatch(most).length).toBeLessThan(10 * SEARCH_QUERY_MAX_CHARS);
    expect(tsQuery(most).length).toBeLessThan(10 * SEARCH_QUERY_MAX_CHARS);
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

  it('cuts the same snippet from a large text, tokenizing only a window of it (issue 31)', async () => {
    const filler = 'filler words here '.repeat(25_000);
    const text = `${filler}the secret word is Zanzibar42, and zanzibar again.${' more text'.repeat(20)}`;
    const tokenized: number[] = [];
    const matchAll = String.prototype.matchAll;
    const spy = vi.spyOn(String.prototype, 'matchAll').mockImplementation(function (this: string, re: RegExp) {
      tokenized.push(this.length);
      return matchAll.call(this, re);
    });
    const s = snippetOf(text, parseSearch('zanzibar* secret'));
    spy.mockRestore();
    expect(Math.max(...tokenized)).toBeLessThan(200);
    expect(s.snippet).toBe('…words here filler words here filler words here the secret word is Zanzibar42, and zanzibar again. more text more text more text more text more text more text…');
    expect(s.highlights.map(([a, b]) => s.snippet.slice(a, b))).toEqual(['secret', 'Zanzibar42', 'zanzibar']);
  });

  it('finds the first match the way the words are split: whole words, prefixes, shared beginnings, symbols', () => {
    const first = (text: string, q: string) => {
      const s = snippetOf(text, parseSearch(q));
      return s.highlights.map(([a, b]) => s.snippet.slice(a, b));
    };
    // `kit` is a word, not the start of `kite`; the prefix `ki*` takes both.
    expect(first('a kite and a kit', 'kit')).toEqual(['kit']);
    expect(first('a kite and a kit', 'kite kit')).toEqual(['kite', 'kit']);
    expect(first('a kite and a kit', 'ki* kite')).toEqual(['kite', 'kit']);
    // Within a word is no match; punctuation and case do not matter; a symbol is part of a word.
    expect(first('skit, KIT.', 'kit')).toEqual(['KIT']);
    expect(first('pay 5$ or a$b', 'a$b')).toEqual(['a$b']);
    expect(first('über Über', 'über')).toEqual(['über', 'Über']);
    // The window is placed around the first match, even when a shorter word shares its start.
    const far = `${'x '.repeat(200)}kitten ${'y '.repeat(200)}kit`;
    expect(snippetOf(far, parseSearch('kit kitten')).snippet).toMatch(/^….*kitten/);
  });
});
