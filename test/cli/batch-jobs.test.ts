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
  });

  it('finishes equal groups in the fewest rounds: a long group is not left to run alone', async () => {
    // A logical clock: every running job ends together at each tick, so the count of ticks is the makespan.
    const waiting: Array<() => void> = [];
    const done = runGroups([['a1', 'a2', 'a3', 'a4'], ['b1', 'b2', 'b3', 'b4'], ['c1', 'c2', 'c3', 'c4']], 2, () => new Promise<void>((r) => waiting.push(r)));
    let finished = false;
    void done.then(() => (finished = true));
    let ticks = 0;
    while (!finished) {
      await sleep(0);
      if (finished) break;
      expect(waiting.length).toBeLessThanOrEqual(2);
      waiting.splice(0).forEach((r) => r());
      ticks++;
    }
    expect(ticks).toBe(6); // 12 jobs, 2 at a time; taking groups strictly in file order needs 8
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
