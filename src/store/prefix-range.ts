/**
 * The least string above every string that starts with `prefix`, in code point order (SQLite's
 * BINARY collation over UTF-8, PostgreSQL's "C"): the range [prefix, end) is exactly the strings
 * with that prefix, so an index on the column answers a prefix by a range. Null when there is no
 * such bound (the prefix is all U+10FFFF, or empty): then only the lower bound applies.
 */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last === 0x10ffff) continue;
    // A surrogate code point cannot be stored as text: the next one above the range is U+E000.
    points.push(last === 0xd7ff ? 0xe000 : last + 1);
    return String.fromCodePoint(...points);
  }
  return null;
}
