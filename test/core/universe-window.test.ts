import { describe, expect, it } from 'vitest';
import { formulaStart, splitsToolGroup, universeWindow } from '../../src/core/universe-window.js';

type M = { role: string; tool_calls?: unknown[] };
const chat = (n: number): M[] => Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant' }));

/** Turns with tool groups: user, assistant(tool_calls), tool, tool, assistant. */
function withTools(n: number): M[] {
  const out: M[] = [];
  let i = 0;
  while (out.length < n) {
    if (i++ % 3 === 0) out.push({ role: 'user' }, { role: 'assistant', tool_calls: [{}] }, { role: 'tool' }, { role: 'tool' }, { role: 'assistant' });
    else out.push({ role: 'user' }, { role: 'assistant' });
  }
  return out.slice(0, n);
}

describe('64/16 universe window', () => {
  it('follows the start formula and holds 48..64 messages beyond 64 (plain turns)', () => {
    let previous = 0;
    for (let n = 0; n <= 300; n++) {
      const w = universeWindow(chat(n));
      const expected = n <= 64 ? 0 : 16 * Math.ceil((n - 64) / 16);
      expect(w.formulaStart, `n=${n}`).toBe(expected);
      expect(w.start, `n=${n}`).toBe(expected);
      expect(w.aligned).toBe(false);
      if (n > 64) {
        expect(n - w.start, `n=${n}`).toBeGreaterThanOrEqual(48);
        expect(n - w.start, `n=${n}`).toBeLessThanOrEqual(64);
      } else {
        expect(w.start).toBe(0);
      }
      // The start only ever moves forward, in steps of 16.
      expect(w.start - previous === 0 || w.start - previous === 16, `n=${n}`).toBe(true);
      previous = w.start;
    }
  });

  it('never starts inside a tool-call group, aligning forward to the next user message', () => {
    for (let n = 0; n <= 300; n++) {
      const msgs = withTools(n);
      const w = universeWindow(msgs);
      expect(w.formulaStart).toBe(formulaStart(n));
      if (n === 0) continue;
      expect(msgs[w.start]?.role, `n=${n}`).toBe('user');
      expect(splitsToolGroup(msgs, w.start), `n=${n}`).toBe(false);
      if (w.start >= w.formulaStart) {
        // It is the first user message at or after the formula start.
        for (let i = w.formulaStart; i < w.start; i++) expect(msgs[i].role).not.toBe('user');
      }
      expect(w.aligned).toBe(w.start !== w.formulaStart);
    }
  });

  it('knows which cut points split a tool group', () => {
    const m: M[] = [{ role: 'user' }, { role: 'assistant', tool_calls: [{}] }, { role: 'tool' }, { role: 'tool' }, { role: 'assistant' }];
    expect([0, 1, 2, 3, 4, 5].map((p) => splitsToolGroup(m, p))).toEqual([false, false, true, true, false, false]);
  });
});
