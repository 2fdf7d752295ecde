import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LocalBackend } from '../../../src/backends/local.js';
import { writeChatgptExport } from '../../helpers/chatgpt-export.js';
import { makeEngine } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/temp.js';

const dir = tempDir('mgpt-import-naming-');

describe('naming the entities of same-title conversations', () => {
  it('numbers them from the names already taken, reading those once for the whole run', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    await backend.createEntity({ name: 'New chat (3)', model: 'mgpt-1-27b' } as never);
    const file = join(dir, 'same-title.json');
    const n = 300;
    await writeChatgptExport(file, n, (i) => ({ id: `c${i}`, title: 'New chat', at: 1_700_000_000 + i * 60, texts: [`hello ${i}`, `hi ${i}`] }));
    const reads = { matching: vi.spyOn(engine.store.entities, 'matching'), namesLike: vi.spyOn(engine.store.entities, 'namesLike') };
    const res = await backend.importChats(file, {});
    expect(res.totals.imported).toBe(n);
    const names = res.entities.map((e) => e.name);
    const want = ['New chat', 'New chat (2)', ...Array.from({ length: n - 2 }, (_, i) => `New chat (${i + 4})`)];
    expect(names).toEqual(want);
    // One read of the taken names for the title, not one per number tried for each conversation
    // (which made n same-title conversations cost about n^3).
    expect(reads.matching.mock.calls.length + reads.namesLike.mock.calls.length).toBe(1);
    // A second run numbers on from what the first made.
    const more = join(dir, 'same-title-more.json');
    await writeChatgptExport(more, 2, (i) => ({ id: `d${i}`, title: 'New chat', at: 1_700_100_000 + i, texts: ['again', 'yes'] }));
    const again = await backend.importChats(more, {});
    expect(again.entities.map((e) => e.name)).toEqual([`New chat (${n + 2})`, `New chat (${n + 3})`]);
    await engine.close();
  });

  it('a dry run numbers the names it plans as the import would, and a title the suffix cuts keeps its numbers unique', async () => {
    const engine = makeEngine(dir);
    const backend = new LocalBackend(engine);
    const long = 'L'.repeat(198);
    const file = join(dir, 'long-title.json');
    await writeChatgptExport(file, 12, (i) => ({ id: `l${i}`, title: i % 2 ? long : 'Plan', at: 1_700_000_000 + i * 60, texts: [`q ${i}`, `a ${i}`] }));
    const dry = await backend.importChats(file, { dryRun: true });
    const planned = dry.entities.map((e) => e.name);
    expect(new Set(planned).size).toBe(12);
    expect(planned.slice(0, 4)).toEqual(['Plan', long, 'Plan (2)', `${'L'.repeat(196)} (2)`]);
    expect(planned.at(-1)).toBe(`${'L'.repeat(196)} (6)`);
    const res = await backend.importChats(file, {});
    expect(res.entities.map((e) => e.name)).toEqual(planned);
    await engine.close();
  });
});
