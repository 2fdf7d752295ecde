import { describe, expect, it } from 'vitest';
import { timeAgo } from '../../src/ui/time-ago.js';

describe('timeAgo', () => {
  const t = '2026-03-10T12:00:00.000Z';
  const at = (ms: number) => Date.parse(t) + ms;
  it('reads as a person would say it', () => {
    expect(timeAgo(t, at(10_000))).toBe('just now');
    expect(timeAgo(t, at(-5_000))).toBe('just now');
    expect(timeAgo(t, at(3 * 60_000))).toBe('3 min ago');
    expect(timeAgo(t, at(2 * 3_600_000))).toBe('2 h ago');
    expect(timeAgo(t, at(26 * 3_600_000))).toBe('yesterday');
    expect(timeAgo(t, at(4 * 86_400_000))).toBe('4 days ago');
    expect(timeAgo(t, at(30 * 86_400_000))).toBe('2026-03-10');
    expect(timeAgo('not a time', 0)).toBe('not a time');
  });
});
