import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { cycles, importGraph } from '../../scripts/import-cycles.mjs';

describe('src/ imports', () => {
  it('form no cycle (a module is fully evaluated before anything that imports it)', async () => {
    const graph: Map<string, string[]> = await importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(cycles(graph)).toEqual([]);
  });

  it('core/ is the bottom layer: its modules import only each other (type imports included)', async () => {
    const graph: Map<string, string[]> = await importGraph();
    const upward = [...graph].flatMap(([from, to]) => (from.startsWith('src/core/') ? to.filter((t) => !t.startsWith('src/core/')).map((t) => `${from} -> ${t}`) : []));
    expect(upward).toEqual([]);
  });

  it('the checker finds a cycle when there is one', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });
});
