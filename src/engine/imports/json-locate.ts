/**
 * Where JSON text first goes wrong, as a UTF-16 index: asked only after JSON.parse refused the
 * text, since node's message does not always say (`Unexpected token '}', "..." is not valid JSON`).
 * A reader of RFC 8259 that keeps the open arrays and objects on a stack of its own rather than
 * on the call stack: a hostile export nests 200,000 deep, which a recursive reader overflows on.
 */
export function firstJsonError(text: string): number {
  const r = new Reader(text);
  try {
    r.document();
    r.ws();
    return r.i < text.length ? r.i : text.length;
  } catch (at) {
    if (typeof at !== 'number') throw at;
    return at;
  }
}

class Reader {
  i = 0;
  /** The closing character of each array or object the reader is inside, innermost last. */
  private readonly open: string[] = [];
  constructor(private readonly text: string) {}

  ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i])) this.i++;
  }

  /** One value, however deep: after each value, the containers it closes and the comma that leads to the next. */
  document(): void {
    for (let more = true; more; ) {
      if (this.value()) continue;
      more = this.afterValue();
    }
  }

  /**
   * A value, or the opening of a container. True when the next thing to read is another value
   * (a container was opened and is not empty), false when a whole value was read.
   */
  private value(): boolean {
    this.ws();
    const c = this.text[this.i];
    if (c === '{' || c === '[') return this.opening(c === '{' ? '}' : ']');
    if (c === '"') return this.str(), false;
    if (c === 't' || c === 'f' || c === 'n') return this.lit(c === 't' ? 'true' : c === 'f' ? 'false' : 'null'), false;
    return this.num(), false;
  }

  private opening(close: string): boolean {
    this.i++;
    this.ws();
    if (this.text[this.i] === close) return void this.i++, false;
    this.open.push(close);
    if (close === '}') this.key();
    return true;
  }

  /** After a value: closes what it ends; true when a comma leads to another value inside the innermost container. */
  private afterValue(): boolean {
    for (;;) {
      const close = this.open.at(-1);
      if (close === undefined) return false;
      this.ws();
      const c = this.text[this.i];
      if (c === close) {
        this.i++;
        this.open.pop();
        continue;
      }
      if (c !== ',') this.fail();
      this.i++;
      this.ws();
      if (close === '}') this.key();
      return true;
    }
  }

  /** An object member's key and its colon; the value follows. */
  private key(): void {
    if (this.text[this.i] !== '"') this.fail();
    this.str();
    this.ws();
    if (this.text[this.i] !== ':') this.fail();
    this.i++;
  }

  private fail(): never {
    throw this.i;
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
