import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { servedFake } from '../helpers/served.js';

// Every door a served request comes through records its API key on the charge it makes, so
// GET /v1/usage?by=key sums each key's spending: the entity route, the OpenAI facade's chat
// completions (an entity and a stateless model) and the Responses API.
const s = servedFake();

interface UsageLine { key: string | null; charges: number; cost_usd: number }

describe('usage by API key over mgpt serve', () => {
  it("sums each key's charges from every route that bills, and nothing of another key's", async () => {
    const [a, b] = [await s.engine.keys.create('local', [...SCOPES]), await s.engine.keys.create('local', [...SCOPES])];
    const call = async (key: string, path: string, body: unknown) => {
      const res = await fetch(`${s.server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, path).toBeLessThan(300);
      await res.text();
    };
    const e = await s.engine.entities.create({ model: 'mgpt-1-27b', name: 'keyed', recall: 'off' }, 'local');
    await call(a.key!, `/v1/entities/${e.id}/messages`, { content: 'one', stream: false });
    await call(a.key!, '/v1/chat/completions', { model: 'entity:keyed', messages: [{ role: 'user', content: 'two' }] });
    await call(a.key!, '/v1/chat/completions', { model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'three, stateless' }] });
    await call(b.key!, '/v1/responses', { model: 'entity:keyed', input: 'four' });
    const res = await fetch(`${s.server.url}/v1/usage?by=key`, { headers: { authorization: `Bearer ${a.key}` } });
    const report = (await res.json()) as { by: string; data: UsageLine[]; charges: number };
    expect(report.by).toBe('key');
    const by = new Map(report.data.map((l) => [l.key, l]));
    expect(by.get(a.id)?.charges).toBe(3);
    expect(by.get(b.id)?.charges).toBe(1);
    expect(report.charges).toBe(4);
  });
});
