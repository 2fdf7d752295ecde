import wrapAnsi from 'wrap-ansi';
import { describe, expect, it } from 'vitest';
import { StreamTail } from '../../src/ui/stream-tail.js';

describe('StreamTail', () => {
  it('shows the last rows of a growing reply as ink would wrap the whole of it', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 100; trial++) {
      const columns = 5 + Math.floor(random() * 40);
      const rows = 1 + Math.floor(random() * 10);
      const tail = new StreamTail(columns);
      let text = '';
      for (let k = 0; k < 150; k++) {
        const r = random();
        text += r < 0.1 ? '\n' : r < 0.15 ? '  ' : r < 0.2 ? '界 ' : `${'abcdef'.slice(0, 1 + Math.floor(random() * 5))} `;
        const all = wrapAnsi(text, columns, { trim: false, hard: true }).split('\n');
        expect(tail.tail(text, rows)).toBe(all.length <= rows ? text : all.slice(-rows).join('\n'));
      }
    }
    // 15,000 comparisons against wrap-ansi over the whole text: ~30 s on a quiet 2-core machine and
    // about 100 s with every core busy, past the default minute.
  }, 240_000);
});
