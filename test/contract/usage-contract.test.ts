import { describe, expect, it } from 'vitest';
import type { RemoteBackend } from '../../src/backends/remote/remote-backend.js';
import { BadRequestError } from '../../src/core/errors.js';
import { collect, contractTargets, useContractTarget } from './targets.js';

// Every entity turn writes its generation record (in the turn's own commit), and GET /v1/usage
// sums the billing ledger, on the local backend, over HTTP, and on two replicas over PostgreSQL.

const targets = await contractTargets('the usage contract');

describe.each(targets)('turn logs and usage contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-usage', name, make);
  const b = () => ctx.t.backend;

  it('every ordinary entity turn has a log record naming its entity and route, with tokens, cost and time', async () => {
    const before = (await b().listLogs({ pageSize: 100 })).total;
    const a = await b().createEntity({ model: 'mgpt-1-27b', name: 'usage-a', recall: 'off' });
    const turns = 5;
    for (let i = 0; i < turns; i++) await collect(b().sendMessage(a.id, { content: `plain turn ${i}` }));
    const logs = await b().listLogs({ pageSize: 100 });
    expect(logs.total - before).toBe(turns);
    const mine = logs.data.filter((l) => l.entityId === a.id);
    expect(mine).toHaveLength(turns);
    for (const l of mine) {
      expect(l).toMatchObject({ kind: 'text', facade: 'entity', model: 'mgpt-1-27b', status: 'ok' });
      expect(l.route).toMatch(/^openai:http:\/\/127\.0\.0\.1:\d+/);
      expect(l.inputTokens).toBeGreaterThan(0);
      expect(l.outputTokens).toBeGreaterThan(0);
      expect(l.costUsd).toBeGreaterThan(0);
      expect(l.totalMs).toBeGreaterThanOrEqual(0);
    }
    const detail = await b().getLog(mine[0]!.id);
    expect(detail.request).toMatchObject({ facade: 'entity', entityId: a.id });
  });

  it('usage sums the ledger by entity, model and day, with --since; totals match the sum of the charges', async () => {
    const a = await b().createEntity({ model: 'mgpt-1-27b', name: 'usage-b', recall: 'off' });
    const c = await b().createEntity({ model: 'mgpt-1-27b', name: 'usage-c', recall: 'off' });
    for (const [id, n] of [[a.id, 3], [c.id, 2]] as const) {
      for (let i = 0; i < n; i++) await collect(b().sendMessage(id, { content: `count me ${i}` }));
    }
    const byEntity = await b().usage({ by: 'entity' });
    expect(byEntity.by).toBe('entity');
    const lineA = byEntity.data.find((l) => l.key === a.id)!;
    const lineC = byEntity.data.find((l) => l.key === c.id)!;
    expect(lineA).toMatchObject({ name: 'usage-b', charges: 3 });
    expect(lineC).toMatchObject({ name: 'usage-c', charges: 2 });
    // Billed: each message and its reply, never the window it was sent with.
    for (const l of [lineA, lineC]) {
      expect(l.input_tokens).toBeGreaterThan(0);
      expect(l.input_tokens).toBeLessThan(10 * l.charges);
      expect(l.cost_usd).toBeGreaterThan(0);
    }
    const sum = byEntity.data.reduce((n, l) => n + l.charges, 0);
    expect(byEntity.charges).toBe(sum);
    const byModel = await b().usage({ by: 'model' });
    expect(byModel.charges).toBe(byEntity.charges);
    expect(byModel.cost_usd).toBeCloseTo(byEntity.cost_usd, 8);
    expect(byModel.data.map((l) => l.key)).toContain('mgpt-1-27b');
    const byDay = await b().usage({});
    expect(byDay.by).toBe('day');
    expect(byDay.data[0]!.key).toBe(new Date().toISOString().slice(0, 10));
    expect((await b().usage({ since: '2999-01-01' })).data).toEqual([]);
  });

  it("usage by key: a served request's charges are its API key's; the local backend's own have none (null)", async () => {
    const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'usage-key', recall: 'off' });
    await collect(b().sendMessage(e.id, { content: 'whose key am I' }));
    await b().appendExchange(e.id, { content: 'recorded', reply: 'without a model' });
    const byKey = await b().usage({ by: 'key' });
    expect(byKey.by).toBe('key');
    const keyId = name === 'local' ? null : (await (b() as unknown as RemoteBackend).whoami()).id;
    // Every charge of this account came through one door: one line, holding all of them.
    expect(byKey.data.map((l) => l.key)).toEqual([keyId]);
    expect(byKey.data[0]!.charges).toBe(byKey.charges);
    expect(byKey.charges).toBe((await b().usage({ by: 'entity' })).charges);
  });

  it('refuses an unknown grouping or a since that is not a date, the same on every backend', async () => {
    await expect(b().usage({ by: 'week' })).rejects.toThrow(/by must be day, model, entity, key/);
    await expect(b().usage({ by: 'week' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(b().usage({ since: 'yesterday-ish' })).rejects.toThrow(/since must be a date/);
  });
});
