import { readFileSync } from 'node:fs';
import { countTokens as o200kCount, decode, encode as o200kEncode } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { boundedChunks, isSpace, LONGEST_RUN, loadTokenEstimator, type TokenEstimator, tokenUpperBound } from '../../src/core/text/tokens.js';

// o200k as the estimator uses it: special-token markers in the text (docs/configuration.md has one) are text.
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const countTokens = (text: string) => o200kCount(text, AS_TEXT);
const encode = (text: string) => o200kEncode(text, AS_TEXT);

let tok: TokenEstimator;
beforeAll(async () => {
  tok = await loadTokenEstimator();
});

const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const randomLetters = (n: number) => {
  let x = 1;
  return Array.from({ length: n }, () => String.fromCharCode(97 + ((x = (x * 48271) % 2147483647) % 26))).join('');
};

const ordinary = {
  prose: file('docs/configuration.md'),
  code: file('src/engine/entities/turn.ts'),
  unicode: 'Ünïcödé, 東京の天気は晴れ, Привет мир, مرحبا, emoji 🍅🎉👩‍👩‍👧 and 𝐀𝐁𝐂 math letters.',
  numbers: 'Pi is 3.14159265358979, 1,234,567.89 USD on 2024-05-13T10:00:00Z; 0xdeadbeef 1e-9.',
  url: 'See https://example.com/' + 'some/long/path/'.repeat(20) + '?q=tokens&lang=en#section.',
  rules: '# Title\n' + '='.repeat(80) + '\n\n' + '-'.repeat(120) + '\n' + '        indented\n'.repeat(5),
  longestRuns: 'a'.repeat(LONGEST_RUN) + ' '.repeat(LONGEST_RUN) + 'b',
};

describe('count', () => {
  it.each(Object.entries(ordinary))('counts %s exactly as o200k does, as one chunk', (_, text) => {
    expect(boundedChunks(text)).toEqual([text]);
    expect(tok.count(text)).toBe(countTokens(text));
  });

  it('counts special-token markers in user text as plain characters, and truncates them too', () => {
    const text = 'before <|endoftext|> after <|im_start|>';
    expect(tok.count(text)).toBeGreaterThan(5);
    expect(tok.truncate(text, 3).length).toBeLessThan(text.length);
  });

  it('gives a text counted again (remembered, evicted, or too long to remember) the count o200k gives', () => {
    const texts = Array.from({ length: 600 }, (_, i) => `message ${i}: ${randomLetters(20 + (i % 50))} ${'word '.repeat(i % 7)}`);
    texts.push(`long ${'x y '.repeat(3000)}`);
    for (let round = 0; round < 3; round++) {
      for (const t of round === 1 ? [...texts].reverse() : texts) expect(tok.count(t)).toBe(countTokens(t));
    }
  });

  it('counts the empty text as 0', () => {
    expect(tok.count('')).toBe(0);
  });

  it('counts a 400,000-letter run close to o200k and in proportion to its length', () => {
    const whole = countTokens('a'.repeat(4000)); // o200k itself, on a run it can still afford
    const run = tok.count('a'.repeat(400_000));
    expect(run).toBeGreaterThanOrEqual(100 * whole);
    expect(run).toBeLessThanOrEqual(100 * whole * 1.1);
    expect(tok.count('a'.repeat(800_000))).toBe(2 * run);
  });

  it('counts a cut run of random letters a little above o200k, never below', () => {
    const text = randomLetters(5000);
    expect(tok.count(text)).toBeGreaterThanOrEqual(countTokens(text));
    expect(tok.count(text)).toBeLessThanOrEqual(countTokens(text) * 1.02);
  });

  it.each([
    ['spaces', ' '.repeat(200_000)],
    ['newlines', '\n'.repeat(200_000)],
    ['unicode spaces', ' \u00a0\u3000'.repeat(50_000)],
    ['punctuation', '-='.repeat(100_000)],
    ['astral letters', '𝐀'.repeat(100_000)],
    ['combining marks', 'e\u0301'.repeat(100_000)],
    ['a run inside prose', `${ordinary.prose}${'x'.repeat(100_000)}${ordinary.prose}`],
  ])('cuts a long run of %s into chunks that rejoin to the text, whole code points each', (_, text) => {
    const chunks = boundedChunks(text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) expect(Buffer.from(chunk).toString()).toBe(chunk);
    expect(tok.count(text)).toBeGreaterThan(0);
    expect(tok.count(text)).toBeLessThanOrEqual(tokenUpperBound(text));
  });
});

describe('truncate', () => {
  it('keeps o200k\'s prefix of ordinary text', () => {
    const text = ordinary.prose;
    expect(tok.truncate(text, 500)).toBe(decode(encode(text).slice(0, 500)));
    expect(tok.truncate(text, 10 ** 6)).toBe(text);
    expect(tok.truncate(text, 0)).toBe('');
  });

  it.each([
    ['letter', 'a'.repeat(400_000)],
    ['random-letter', randomLetters(100_000)],
    ['accented letter (after prose)', `${ordinary.prose.slice(0, 3000)}${'é'.repeat(100_000)}`],
  ])('cuts a long %s run to a prefix of at most the tokens asked, and nearly all of them', (_, text) => {
    for (const max of [1, 17, 1000, 1500]) {
      const kept = tok.truncate(text, max);
      expect(text.startsWith(kept)).toBe(true);
      expect(tok.count(kept)).toBeLessThanOrEqual(max);
      expect(tok.count(kept)).toBeGreaterThanOrEqual(max - 2);
    }
  });
});

describe('isSpace', () => {
  it('is exactly the regex class \\s', () => {
    const units = Array.from({ length: 0x10000 }, (_, unit) => unit);
    expect(units.filter((unit) => isSpace(unit) !== /\s/.test(String.fromCharCode(unit)))).toEqual([]);
  });
});
