import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import o200kRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countTokens, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeO200kTable, o200kFromTable, type O200kEncoding, openO200kTable } from '../../src/core/text/tokens-table.js';

// The compact table must count, encode and decode exactly as gpt-tokenizer's own o200k module.
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const pseudoRandom = (n: number, span: number) => {
  let x = 7;
  return Array.from({ length: n }, () => String.fromCharCode(32 + ((x = (x * 48271) % 2147483647) % span))).join('');
};

const texts = {
  prose: file('docs/configuration.md'),
  code: file('src/engine/entities/turn.ts'),
  unicode: 'Ünïcödé, 東京の天気は晴れ, Привет мир, مرحبا, emoji 🍅🎉👩‍👩‍👧 and 𝐀𝐁𝐂 math letters.',
  specialMarkers: 'text with <|endoftext|> and <|im_start|>user markers is text',
  loneSurrogates: 'a \ud800 b \udfff c \ud83d',
  // Code points all over the BMP: many pieces fall back to byte-level tokens that are not UTF-8.
  scattered: pseudoRandom(4000, 0xd000),
  latin1: pseudoRandom(4000, 0xe0),
  digits: '1234567890'.repeat(50),
  whitespace: ' \t\n\r\u00a0\u3000'.repeat(40),
};

let table: Uint8Array;
let enc: O200kEncoding;
beforeAll(() => {
  table = encodeO200kTable(o200kRanks);
  enc = o200kFromTable(table);
});

describe('the compact o200k table', () => {
  it.each(Object.entries(texts))('counts and encodes %s exactly as gpt-tokenizer', (_, text) => {
    expect(enc.countTokens(text, AS_TEXT)).toBe(countTokens(text, AS_TEXT));
    expect(enc.encode(text, AS_TEXT)).toEqual(encode(text, AS_TEXT));
  });

  it('decodes every rank to the value gpt-tokenizer has for it', () => {
    const ids = encode(texts.unicode, AS_TEXT);
    expect(enc.decode(ids)).toBe(texts.unicode);
    // decode() goes through a shared streaming TextDecoder, so compare the values behind it.
    const core = (enc as unknown as { bytePairEncodingCoreProcessor: { bytePairRankDecoder: unknown } }).bytePairEncodingCoreProcessor;
    expect(core.bytePairRankDecoder).toEqual(o200kRanks);
  });

  it('reads the table from a file, and says there is none when the file is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mgpt-table-'));
    writeFileSync(join(dir, 'o200k.table'), table);
    expect(openO200kTable(pathToFileURL(join(dir, 'o200k.table')))!.countTokens(texts.prose, AS_TEXT)).toBe(countTokens(texts.prose, AS_TEXT));
    expect(openO200kTable(pathToFileURL(join(dir, 'missing.table')))).toBeUndefined();
  });

  it('refuses a truncated or foreign file rather than miscounting', () => {
    expect(() => o200kFromTable(table.subarray(0, table.byteLength - 4))).toThrow(/truncated/);
    expect(() => o200kFromTable(new Uint8Array(64))).toThrow(/not a table/);
  });
});
