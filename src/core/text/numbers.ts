/**
 * How every command prints dollars (docs/operating.md#how-money-is-printed): a dollar or more with
 * cents and thousands separators ($1,234.50); under a dollar with three significant digits and at
 * least cents ($0.50, $0.0123, $0.000018), so a one-token charge never reads as $0.0000. Nothing is
 * rounded up to look like more: the ledger itself keeps a millionth of a cent.
 */
export function formatUsd(usd: number): string {
  const sign = usd < 0 ? '-' : '';
  const x = Math.abs(usd);
  if (x === 0) return '$0.00';
  if (x >= 1) return `${sign}$${x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const digits = Math.max(2, Math.min(8, 2 - Math.floor(Math.log10(x))));
  const text = x.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, '$1');
  return `${sign}$${text}`;
}

/** A count with thousands separators (1,108). */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** "1 message", "2 messages": a count and its noun (the plural given when it is not noun + "s"). */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : nouns}`;
}
