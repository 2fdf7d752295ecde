import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { isSummaryRequest } from '../helpers/fake-openai.js';
import { collect, contractTargets, useContractTarget } from './targets.js';

// Every entity setting an update takes, a create takes too (budget, cap, recall, recall tokens and
// the memory tool), checked by the engine, so the local backend and mgpt serve (on SQLite and on
// two replicas over PostgreSQL) store the same entity and refuse the same input.

const targets = await contractTargets('the entity settings contract');

describe.each(targets)('entity settings contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-entity-settings', name, make);
  const b = () => ctx.t.backend;
  /** Whether each model request since `from` offered `remember`. */
  const offered = (from: number) =>
    ctx.fake.requests.slice(from).filter((r) => !isSummaryRequest(r.body)).map((r) => (r.body.tools ?? []).some((x: { function?: { name?: string } }) => x.function?.name === 'remember'));

  it('a create takes the budget, cap, recall, recall tokens and memory tool, and a retrieve shows them', async () => {
    const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'set-all', budget_tokens: 180, cap_tokens: 1500, recall: 'auto', recall_tokens: 40, memory_tool: true });
    const got = await b().getEntity(e.id);
    for (const x of [e, got]) {
      expect(x).toMatchObject({ window: { budget_tokens: 180 }, transcript: { cap_tokens: 1500 }, recall: 'auto', recall_tokens: 40, memory_tool: true });
    }
    const plain = await b().createEntity({ model: 'mgpt-1-27b', name: 'set-none', recall: 'off' });
    expect(plain.memory_tool).toBeUndefined();
    expect(plain.window.budget_tokens).toBe(200);
  });

  it('refuses a setting out of its range, as update does, creating nothing', async () => {
    const before = (await b().listEntities()).data.length;
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ budget_tokens: 5 }, /^budget_tokens must be an integer from/],
      [{ cap_tokens: 0 }, /^cap_tokens must be a positive integer, got 0/],
      [{ cap_tokens: 10_000_000_000 }, /^cap_tokens 10000000000 is over the highest this engine allows/],
      [{ budget_tokens: 300, recall_tokens: 151 }, /^recall_tokens must be an integer from 1 to 150 \(half of budget_tokens 300\)/],
      [{ memory_tool: 'yes' }, /^memory_tool must be true or false, got "yes"/],
      [{ colour: 'red' }, /^unknown fields: colour; a create takes /],
    ];
    for (const [fields, message] of refusals) {
      const err = await b().createEntity({ model: 'mgpt-1-27b', name: 'refused', ...fields } as never).then(() => undefined, (x: unknown) => x);
      expect(err, JSON.stringify(fields)).toBeInstanceOf(BadRequestError);
      expect((err as Error).message).toMatch(message);
    }
    expect((await b().listEntities()).data.length).toBe(before);
    const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'upd', recall: 'off' });
    await expect(b().updateEntity(e.id, { memory_tool: 'yes' } as never)).rejects.toThrow(/^memory_tool must be true or false/);
  });

  it("the memory tool is the entity's: every turn offers remember; a send can turn it off (or on) for itself; update changes it", async () => {
    const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'remembers', recall: 'off', memory_tool: true });
    const from = ctx.fake.requests.length;
    await collect(b().sendMessage(e.id, { content: 'first' }));
    await collect(b().sendMessage(e.id, { content: 'second', memoryTool: false }));
    expect(offered(from)).toEqual([true, false]);
    const off = await b().updateEntity(e.id, { memory_tool: false });
    expect(off.memory_tool).toBeUndefined();
    const next = ctx.fake.requests.length;
    await collect(b().sendMessage(e.id, { content: 'third' }));
    await collect(b().sendMessage(e.id, { content: 'fourth', memoryTool: true }));
    expect(offered(next)).toEqual([false, true]);
    expect((await b().updateEntity(e.id, { memory_tool: true })).memory_tool).toBe(true);
  });

  it('an export carries the memory tool setting and its import keeps it', async () => {
    const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'exported', recall: 'off', memory_tool: true });
    const chunks: Uint8Array[] = [];
    for await (const c of b().exportEntity(e.id, 'json')) chunks.push(c);
    const bytes = Buffer.concat(chunks);
    expect(JSON.parse(bytes.toString('utf8')).manifest.entity.memory_tool).toBe(true);
    const copy = await b().importArchive(bytes, 'json', { name: 'exported copy' });
    expect((await b().getEntity(copy.id)).memory_tool).toBe(true);
  });
});
