import { describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import { rotationsItem } from '../../src/ui/rotations-item.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

describe('/rotations in the REPL', () => {
  it('lists each rotation with why, what it folded and whether it was undone; a universe is refused', async () => {
    const engine = makeEngine(tempDir(), { windowBudget: 120 });
    const backend = new LocalBackend(engine);
    const { id } = await backend.createEntity({ model: 'mgpt-1-27b' });
    for (let i = 0; i < 10; i++) await collect(backend.sendMessage(id, { content: `note ${i}: ${'the long voyage '.repeat(4)}` }));
    await backend.rotate(id, { action: 'undo' });
    const shown = await rotationsItem({ backend }, { kind: 'entity', id }, () => 'just now');
    const { rotations } = await backend.listRotations(id);
    expect(shown.kind).toBe('output');
    const lines = shown.text.split('\n');
    expect(lines).toHaveLength(rotations.length);
    const first = rotations[0];
    expect(lines[0]).toBe(`1. turn #${first.seq} (just now): folded #${first.from_seq}–${first.to_seq} into ${first.summary.tokens} tok by ${first.route.model}, ${first.blocks_before.length}→${first.blocks_after.length} blocks`);
    expect(lines.at(-1)).toMatch(/ \[undone\]$/);
    expect(await rotationsItem({ backend }, { kind: 'universe', id: 'u' })).toMatchObject({ kind: 'error', exitCode: 2 });
    engine.close();
  });
});
