import { describe, expect, it } from 'vitest';
import { BadRequestError, MgptError } from '../../src/core/errors.js';
import { entityLabel } from '../../src/core/ref.js';
import { localTarget, remoteTarget } from './harness.js';
import { type MakeTarget, useContractTarget } from './targets.js';

// An error about an entity names it as its user does (its name), and carries its id for machine
// output: `entityId` on the error, `entity_id` in mgpt serve's error body, read back by the remote backend.

const targets: Array<[string, MakeTarget]> = [['local', localTarget], ['remote', remoteTarget]];

async function refusal(p: Promise<unknown>): Promise<MgptError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(MgptError);
  return err as MgptError;
}

describe('entityLabel', () => {
  it('is the name when it has one (quoted when it has spaces), else the id', () => {
    expect(entityLabel({ id: 'e1', name: 'ada' })).toBe('ada');
    expect(entityLabel({ id: 'e1', name: 'my ada' })).toBe('"my ada"');
    expect(entityLabel({ id: 'e1', name: '' })).toBe('e1');
    expect(entityLabel({ id: 'e1', name: null })).toBe('e1');
  });
});

describe.each(targets)('errors name the entity: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-entity-errors', name, make);

  it('an undo with nothing to undo, and a fold of an empty window, say "entity ada", with the id beside', async () => {
    const ada = await ctx.t.backend.createEntity({ model: 'mgpt-1-27b', name: 'ada', recall: 'off' });
    const undo = await refusal(ctx.t.backend.rotate(ada.id, { action: 'undo' }));
    expect(undo).toBeInstanceOf(BadRequestError);
    expect(undo.message).toBe('entity ada has no rotation to undo');
    expect(undo.message).not.toContain(ada.id);
    expect(undo.entityId).toBe(ada.id);
    const fold = await refusal(ctx.t.backend.rotate(ada.id, { action: 'rotate' }));
    expect(fold.message).toBe('entity ada has no messages in its window to fold');
    expect(fold.entityId).toBe(ada.id);
  });

  it('an entity with no name is named by its id', async () => {
    const anon = await ctx.t.backend.createEntity({ model: 'mgpt-1-27b', recall: 'off' });
    const undo = await refusal(ctx.t.backend.rotate(anon.id, { action: 'undo' }));
    expect(undo.message).toBe(`entity ${anon.id} has no rotation to undo`);
    expect(undo.entityId).toBe(anon.id);
  });
});

describe.each(targets)('memory errors name the entity: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-memory-errors', name, make);

  it('a block the entity does not have: "entity ada has no pinned memory block", the id beside', async () => {
    const b = ctx.t.backend;
    const ada = await b.createEntity({ model: 'mgpt-1-27b', name: 'ada', recall: 'off' });
    for (const call of [() => b.getMemory(ada.id, 'missing'), () => b.deleteMemory(ada.id, 'missing')]) {
      const err = await refusal(call());
      expect(err.code).toBe('no_memory_block');
      expect(err.message).toBe('entity ada has no pinned memory block "missing"');
      // The remote backend's hint is the request id the server answered with.
      if (name === 'local') expect(err.hint).toBe('list its blocks with: mgpt memory ada');
      expect(err.entityId).toBe(ada.id);
    }
  });
});
