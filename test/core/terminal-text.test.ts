import { describe, expect, it } from 'vitest';
import { logField } from '../../src/core/text/terminal-text.js';

describe('logField', () => {
  it('leaves an ordinary value as it is', () => {
    expect(logField('/v1/entities/:id/messages')).toBe('/v1/entities/:id/messages');
    expect(logField('ent_0a1b2c')).toBe('ent_0a1b2c');
    expect(logField('Ünïcödé-名前')).toBe('Ünïcödé-名前');
  });

  it('writes C0, DEL, C1, line and paragraph separators and bidi controls visibly', () => {
    expect(logField('/\nforged\r\t')).toBe('/\\nforged\\r\\t');
    expect(logField('/\x1b]0;x\x07')).toBe('/\\x1b]0;x\\x07');
    expect(logField('a\x00b\x7fc\x85d\x9be')).toBe('a\\x00b\\x7fc\\x85d\\x9be');
    expect(logField('a\u2028b\u2029c\u202ed')).toBe('a\\u2028b\\u2029c\\u202ed');
    expect(logField('C:\\n')).toBe('C:\\\\n');
  });

  it('quotes a value that could pass for more fields, or for none', () => {
    expect(logField('a req forged')).toBe('"a req forged"');
    expect(logField('a\u00a0b')).toBe('"a\u00a0b"');
    expect(logField('x=1')).toBe('"x=1"');
    expect(logField('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(logField('')).toBe('""');
  });
});
