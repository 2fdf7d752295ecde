import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { servedFake } from '../helpers/served.js';

/**
 * Issue 31, finding 2: a reply made of tool calls on an entity (the facade's `entity:` models, and
 * an entity with recall whose model keeps calling recall past the cap) was returned with 200 but
 * not billed, not logged and not counted against the key's tokens per minute, and the facade said
 * `Mgpt-Turn: stored` though nothing was stored. Every provider call is billed and logged to the
 * account that asked for it, whatever the reply holds.
 */
const served = servedFake();

const tools = [{ type: 'function' as const, function: { name: 'roll', parameters: { type: 'object', properties: { sides: { type: 'integer' } } } } }];
const roll = (id: string) => ({ toolCalls: [{ id, name: 'roll', arguments: '{"sides":20}' }] });

async function accountWithKey(name: string, limits: { tpm?: number } = {}): Promise<{ id: string; userId: string; key: string }> {
  const a = await served.engine.accounts.create(name);
  const key = (await served.engine.keys.create(name, ['mgpt.responses:create'], limits)).key!;
  return { id: a.id, userId: a.userId, key };
}

function clientFor(key: string): OpenAI {
  return new OpenAI({ baseURL: `${served.server.url}/v1`, apiKey: key, maxRetries: 0 });
}

async function logsOf(userId: string, facade: string) {
  const list = await served.engine.logs.list({ pageSize: 100 }, userId);
  return Promise.all(list.data.filter((l) => l.facade === facade).map((l) => served.engine.logs.get(l.id, userId)));
}

describe('a reply that calls tools is billed, logged and counted (issue 31)', () => {
  it("on the facade's entity: models, streamed and not, it is billed and logged and says Mgpt-Turn: tool_calls", async () => {
    const acct = await accountWithKey('toolfacade');
    const client = clientFor(acct.key);
    const e = await served.engine.entities.create({ model: 'mgpt-1-27b', name: 'dice' }, acct.id);
    served.fake.script(roll('call_1'));
    const buffered = await client.chat.completions.create({ model: 'entity:dice', messages: [{ role: 'user', content: 'roll a d20' }], tools }).withResponse();
    expect(buffered.data.choices[0].finish_reason).toBe('tool_calls');
    expect(buffered.response.headers.get('mgpt-turn')).toBe('tool_calls');
    served.fake.script(roll('call_2'));
    const stream = await client.chat.completions.create({ model: 'entity:dice', messages: [{ role: 'user', content: 'roll a d20' }], tools, stream: true }).withResponse();
    expect(stream.response.headers.get('mgpt-turn')).toBe('tool_calls');
    for await (const _ of stream.data) void _;
    // Nothing stored, but both provider calls billed to the account and logged.
    expect((await served.engine.entities.messages(e.id, {}, acct.id)).data).toEqual([]);
    const ledger = await served.engine.store.accounts.ledger(acct.id);
    expect(ledger).toHaveLength(2);
    for (const row of ledger) expect(row).toMatchObject({ entityId: e.id, model: 'mgpt-1-27b', inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(ledger.every((r) => r.inputTokens > 0 && r.outputTokens > 0)).toBe(true);
    const logs = await logsOf(acct.userId, 'tool_calls');
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatchObject({ status: 'ok', request: { entityId: e.id }, response: { toolCalls: 1 } });
    // The final reply of the round is a stored turn, as before.
    served.fake.script({ text: 'You rolled 17.' });
    const round = [
      { role: 'user' as const, content: 'roll a d20' },
      { role: 'assistant' as const, content: null, tool_calls: buffered.data.choices[0].message.tool_calls },
      { role: 'tool' as const, tool_call_id: 'call_1', content: '17' },
    ];
    const final = await client.chat.completions.create({ model: 'entity:dice', messages: round, tools }).withResponse();
    expect(final.response.headers.get('mgpt-turn')).toBe('stored');
    expect(await served.engine.store.accounts.ledger(acct.id)).toHaveLength(3);
  });

  it('counts the tool round against the key’s tokens per minute', async () => {
    const acct = await accountWithKey('tooltpm', { tpm: 100_000 });
    const client = clientFor(acct.key);
    await served.engine.entities.create({ model: 'mgpt-1-27b', name: 'counted' }, acct.id);
    served.fake.script(roll('call_3'));
    const first = await client.chat.completions.create({ model: 'entity:counted', messages: [{ role: 'user', content: 'roll '.repeat(40) }], tools }).withResponse();
    expect(first.data.choices[0].finish_reason).toBe('tool_calls');
    const billed = (await served.engine.store.accounts.ledger(acct.id)).reduce((n, r) => n + r.inputTokens + r.outputTokens, 0);
    expect(billed).toBeGreaterThan(40);
    const next = await fetch(`${served.server.url}/v1/models`, { headers: { authorization: `Bearer ${acct.key}` } });
    expect(next.status).toBe(200);
    served.fake.script({ text: 'ok' });
    const after = await client.chat.completions.create({ model: 'entity:counted', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    // What this request found left: the limit less the tool round's tokens (refilled a little since).
    const remaining = Number(after.response.headers.get('x-ratelimit-remaining-tokens'));
    expect(remaining).toBeLessThanOrEqual(100_000 - billed + 100);
  });

  it('on POST /v1/entities/{id}/messages, recall calls past the cap: the client gets no recall call, all four provider calls billed and logged', async () => {
    const acct = await accountWithKey('recaller');
    const e = await served.engine.entities.create({ model: 'mgpt-1-27b', name: 'stubborn', recall: true }, acct.id);
    const before = served.fake.requests.length;
    // A model that ignores tool_choice "none" after the third round and calls recall again.
    served.fake.script(...[1, 2, 3, 4].map((i) => ({ toolCalls: [{ id: `r${i}`, name: 'recall', arguments: JSON.stringify({ query: `word ${i}` }) }] })));
    const res = await fetch(`${served.server.url}/v1/entities/${e.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'what was the word?', stream: false }),
    });
    expect(res.status).toBe(200);
    // The fourth call is the engine's own, never the client's: it is dropped and the (empty) reply is the answer (issue 33).
    const body = (await res.json()) as { choices: Array<{ finish_reason: string; message: { tool_calls?: unknown } }> };
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].message.tool_calls).toBeUndefined();
    expect(served.fake.requests.length - before).toBe(4);
    expect(served.fake.requests.at(-1)!.body.tool_choice).toBe('none');
    const [row] = await served.engine.store.accounts.ledger(acct.id);
    const oneCall = Math.ceil(JSON.stringify([{ id: 'r1', type: 'function', function: { name: 'recall', arguments: '{"query":"word 1"}' } }]).length / 8);
    // The message, and what the model wrote in all four replies.
    expect(row).toMatchObject({ entityId: e.id });
    expect(row.outputTokens).toBeGreaterThanOrEqual(4 * oneCall);
    const [log] = await logsOf(acct.userId, 'recall');
    expect(log).toMatchObject({ request: { entityId: e.id, rounds: 3 } });
    expect((await served.engine.entities.messages(e.id, {}, acct.id)).data.map((m) => m.content)).toEqual(['what was the word?', '']);
  });

  it('a balance the tool rounds used up gets 402 before the provider is called', async () => {
    const acct = await accountWithKey('toolbroke');
    const client = clientFor(acct.key);
    await served.engine.entities.create({ model: 'mgpt-1-27b', name: 'spender' }, acct.id);
    await served.engine.accounts.topup('toolbroke', 0.00005);
    let refused: { status?: number; error?: { type?: string } } | undefined;
    const fallback = served.fake.fallback;
    served.fake.fallback = () => roll('again');
    try {
      for (let i = 0; i < 50 && !refused; i++) {
        const before = served.fake.requests.length;
        const r = await client.chat.completions.create({ model: 'entity:spender', messages: [{ role: 'user', content: 'roll again and again' }], tools }).catch((x) => x);
        if (r.status !== 402) continue;
        refused = r;
        expect(served.fake.requests.length).toBe(before);
      }
    } finally {
      served.fake.fallback = fallback;
    }
    expect(refused?.error).toMatchObject({ type: 'insufficient_quota' });
    const account = await served.engine.store.accounts.get(acct.id);
    expect(account!.balanceUsd!).toBeLessThanOrEqual(0.00005);
    expect((await served.engine.store.accounts.ledger(acct.id)).length).toBeGreaterThan(0);
  });
});
