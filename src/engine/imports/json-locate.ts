/**
 * Where JSON text first goes wrong, as a UTF-16 index: asked only after JSON.parse refused the
 * text, since node's message does not always say (`Unexpected token '}', "..." is not valid JSON`).
 * A plain recursive-descent reader of RFC 8259; the depth of a conversation is small.
 */
export function firstJsonError(text: string): number {
  const r = new Reader(text);
  try {
    r.value();
    r.ws();
    return r.i < text.length ? r.i : text.length;
  } catch (at) {
    if (typeof at !== 'number') throw at;
    return at;
  }
}

class Reader {
  i = 0;
  constructor(private readonly text: string) {}

  ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i])) this.i++;
  }

  value(): void {
    this.ws();
    const c = this.text[this.i];
    if (c === '{') return this.list('}', () => this.member());
    if (c === '[') return this.list(']', () => this.value());
    if (c === '"') return this.str();
    if (c === 't' || c === 'f' || c === 'n') return this.lit(c === 't' ? 'true' : c === 'f' ? 'false' : 'null');
    this.num();
  }

  private fail(): never {
    throw this.i;
  }

  private member(): void {
    if (this.text[this.i] !== '"') this.fail();
    this.str();
    this.ws();
    if (this.text[this.i] !== ':') this.fail();
    this.i++;
    this.value();
  }

  private list(close: string, item: () => void): void {
    this.i++;
    this.ws();
    if (this.text[this.i] === close) return void this.i++;
    for (;;) {
      item();
      this.ws();
      const c = this.text[this.i];
      if (c === close) return void this.i++;
      if (c !== ',') this.fail();
      this.i++;
      this.ws();
    }
  }

  private str(): void {
    const t = this.text;
    for (this.i++; ; ) {
      if (this.i >= t.length || t[this.i] < ' ') this.fail();
      const c = t[this.i];
      if (c === '"') return void this.i++;
      if (c !== '\\') this.i++;
      else if (t[this.i + 1] === 'u' && /^[0-9a-fA-F]{4}$/.test(t.slice(this.i + 2, this.i + 6))) this.i += 6;
      else if (t[this.i + 1] !== undefined && '"\\/bfnrt'.includes(t[this.i + 1])) this.i += 2;
      else this.fail();
    }
  }

  private lit(word: string): void {
    if (!this.text.startsWith(word, this.i)) this.fail();
    this.i += word.length;
  }

  private num(): void {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!m || m[0] === '' || m[0] === '-') this.fail();
    this.i += m[0].length;
  }
}
