import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchJournal } from '../../src/cli/batch-journal.js';
import { tempDir } from '../helpers/temp.js';

// The journal a batch keeps: each record synced before its job goes on, records of jobs that
// start together sharing one write and one fsync.
const dir = tempDir('mgpt-journal-');

async function fileHandleProto(): Promise<{ sync: () => Promise<void> }> {
  const fh = await open(join(dir, 'probe'), 'a');
  await fh.close();
  return Object.getPrototypeOf(fh);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('BatchJournal', () => {
  it('group-commits: 16 jobs starting at once share one synced write, and a rerun reads them all', async () => {
    const sync = vi.spyOn(await fileHandleProto(), 'sync');
    const journal = new BatchJournal(join(dir, 'batches'), 'k1');
    const firsts = await Promise.all(Array.from({ length: 16 }, (_, i) => journal.firstAsked(`j${i}`, `fp${i}`)));
    expect(firsts).toEqual(Array.from({ length: 16 }, (_, i) => `fp${i}`));
    expect(sync).toHaveBeenCalledTimes(1);
    await journal.addEntity('n1', 'entity-1');
    expect(sync).toHaveBeenCalledTimes(2);
    await journal.close();
    expect(readFileSync(join(dir, 'batches', 'k1.jsonl'), 'utf8').trim().split('\n')).toHaveLength(17);

    const rerun = new BatchJournal(join(dir, 'batches'), 'k1');
    expect(await rerun.firstAsked('j3', 'changed')).toBe('fp3');
    expect(rerun.entity('n1')).toBe('entity-1');
    expect(await rerun.firstAsked('j99', 'fp99')).toBe('fp99');
    await rerun.close();
  });

  it('a record is on disk before its promise resolves, also when appended during a write', async () => {
    const journal = new BatchJournal(join(dir, 'batches'), 'k2');
    const first = journal.firstAsked('a', 'fa');
    await Promise.resolve();
    const second = journal.firstAsked('b', 'fb');
    await first;
    await second;
    const lines = readFileSync(join(dir, 'batches', 'k2.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([{ job: 'a', asked: 'fa' }, { job: 'b', asked: 'fb' }]);
    await journal.close();
  });

  it('records every job up front in one synced write; the ones that never started are withdrawn', async () => {
    const sync = vi.spyOn(await fileHandleProto(), 'sync');
    const journal = new BatchJournal(join(dir, 'batches'), 'k3');
    await journal.recordAll([['a', 'fa'], ['b', 'fb'], ['c', 'fc']]);
    expect(sync).toHaveBeenCalledTimes(1);
    const file = join(dir, 'batches', 'k3.jsonl');
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
    // Starting a recorded job writes nothing: it goes on at once.
    expect(await journal.firstAsked('a', 'fa')).toBe('fa');
    expect(sync).toHaveBeenCalledTimes(1);
    await journal.withdrawUnsent();
    await journal.close();

    const rerun = new BatchJournal(join(dir, 'batches'), 'k3');
    expect(await rerun.firstAsked('a', 'changed')).toBe('fa'); // started: its first version stays
    expect(await rerun.firstAsked('b', 'fb2')).toBe('fb2'); // never started: as if never recorded
    // A job recorded by an earlier run is not recorded again, nor withdrawn by this one.
    await rerun.recordAll([['a', 'changed'], ['c', 'fc3']]);
    await rerun.withdrawUnsent();
    await rerun.close();
    const third = new BatchJournal(join(dir, 'batches'), 'k3');
    expect(await third.firstAsked('a', 'x')).toBe('fa');
    expect(await third.firstAsked('b', 'x')).toBe('fb2');
    expect(await third.firstAsked('c', 'x')).toBe('x');
    await third.close();
  });
});
