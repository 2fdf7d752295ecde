/**
 * Whether `text` is JSON cut short: every character so far fits a JSON value, and only its end is
 * missing. `complete` when it is whole JSON; `invalid` at the first character no JSON could hold.
 */
export function jsonPrefix(text: string): 'complete' | 'prefix' | { invalid: number } {
  const END = Symbol('end');
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const peek = () => {
    if (i >= text.length) throw END;
    return text[i];
  };
  const fail = (): never => {
    throw { invalid: i };
  };
  const literal = (word: string) => {
    for (const ch of word) if (peek() === ch) i++; else fail();
  };
  const string = () => {
    if (peek() !== '"') fail();
    i++;
    for (;;) {
      const ch = peek();
      i++;
      if (ch === '"') return;
      if (ch === '\\') {
        const e = peek();
        i++;
        if (e === 'u') for (let k = 0; k < 4; k++) /[0-9a-fA-F]/.test(peek()) ? i++ : fail();
        else if (!'"\\/bfnrt'.includes(e)) fail();
      } else if (ch < ' ') fail();
    }
  };
  const number = () => {
    const start = i;
    while (i < text.length && /[-+0-9.eE]/.test(text[i])) i++;
    if (i === text.length) {
      if (!/^-?(0|[1-9]\d*)?(\.\d*)?([eE][-+]?\d*)?$/.test(text.slice(start))) fail();
      throw END;
    }
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/.test(text.slice(start, i))) fail();
  };
  const value = (): void => {
    ws();
    const ch = peek();
    if (ch === '{') return container('}', () => (string(), ws(), peek() === ':' ? i++ : fail(), value()));
    if (ch === '[') return container(']', value);
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    fail();
  };
  const container = (close: string, item: () => void) => {
    i++;
    ws();
    if (peek() === close) return void i++;
    for (;;) {
      ws();
      item();
      ws();
      const ch = peek();
      i++;
      if (ch === close) return;
      if (ch !== ',') (i--, fail());
    }
  };
  try {
    value();
    ws();
    return i === text.length ? 'complete' : { invalid: i };
  } catch (e) {
    if (e === END) return 'prefix';
    return e as { invalid: number };
  }
}
