import { describe, expect, it } from 'vitest';
import { runGroups } from '../../src/cli/batch-jobs.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runGroups', () => {
  it('never exceeds the concurrency, keeps each group in order, and lets short groups pass a long one', async () => {
    const groups = [Array.from({ length: 6 }, (_, i) => `long-${i}`), ...Array.from({ length: 8 }, (_, g) => [`g${g}-0`, `g${g}-1`])];
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    const running = new Set<string>();
    await runGroups(groups, 3, async (job) => {
      const group = job.split('-')[0];
      expect(running.has(group)).toBe(false); // one job of a group at a time
      running.add(group);
      active++;
      peak = Math.max(peak, active);
      await sleep(5 + Math.random() * 10);
      order.push(job);
      active--;
      running.delete(group);
    });
    expect(peak).toBe(3);
    expect(order).toHaveLength(22);
    for (const g of groups) expect(order.filter((j) => g.includes(j))).toEqual(g);
    // The long group did not hold everyone back: other groups finished before it did.
    expect(order.indexOf('g7-1')).toBeLessThan(order.indexOf('long-5'));
  });

  it('stops taking jobs on abort and rethrows the first error after the jobs in flight', async () => {
    const abort = new AbortController();
    const ran: number[] = [];
    await runGroups([[1], [2], [3], [4]], 1, async (j) => {
      ran.push(j);
      if (j === 2) abort.abort();
    }, abort.signal);
    expect(ran).toEqual([1, 2]);
    await expect(runGroups([[1], [2]], 2, async (j) => {
      if (j === 1) throw new Error('disk full');
      await sleep(5);
    })).rejects.toThrow('disk full');
  });
});
