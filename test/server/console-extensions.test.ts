import { describe, expect, it } from 'vitest';
import { servedFake } from '../helpers/served.js';

/**
 * The HTTP extensions the console stands on (issue 36), usable by any script: keys and limits for a
 * key with `mgpt.admin`, and a user's universes read back (never their prompt text).
 */
const served = servedFake({ narrator: true });

async function keyFor(account: string, scopes: string[]): Promise<string> {
  await served.engine.accounts.create(account).catch(() => undefined);
  return (await served.engine.keys.create(account, scopes)).key!;
}

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(served.server.url + path, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

describe('keys and limits over HTTP (scope mgpt.admin)', () => {
  it('lists keys without secrets, creates one (its secret once), sets and clears limits, revokes', async () => {
    const admin = await keyFor('ops', ['mgpt.admin']);
    const created = await call(admin, 'POST', '/v1/keys', { account: 'ops', scopes: ['mgpt.responses:create'], rpm: 30 });
    expect(created.status).toBe(201);
    expect(created.json.key).toMatch(/^mgpt_live_/);
    expect(created.json.rpm).toBe(30);
    const list = await call(admin, 'GET', '/v1/keys');
    expect(list.status).toBe(200);
    expect(list.json.data.find((k: { id: string }) => k.id === created.json.id)).toMatchObject({ rpm: 30, revokedAt: null });
    expect(JSON.stringify(list.json)).not.toContain(created.json.key.split('.')[1]);
    expect((await call(created.json.key, 'GET', '/v1/entities')).status).toBe(200);
    const limited = await call(admin, 'PATCH', `/v1/keys/${created.json.id}`, { rpm: null, tpm: 5000 });
    expect(limited.json).toMatchObject({ rpm: null, tpm: 5000 });
    expect((await call(admin, 'PATCH', `/v1/keys/${created.json.id}`, { rpm: 0 })).status).toBe(400);
    expect((await call(admin, 'PATCH', `/v1/keys/${created.json.id}`, { rpm: 'many' })).status).toBe(400);
    expect((await call(admin, 'PATCH', `/v1/keys/${created.json.id}`, { scopes: [] })).status).toBe(400);
    const revoked = await call(admin, 'DELETE', `/v1/keys/${created.json.id}`);
    expect(revoked.json.revokedAt).not.toBeNull();
    expect((await call(created.json.key, 'GET', '/v1/entities')).status).toBe(401);
    expect((await call(admin, 'DELETE', '/v1/keys/key_0000000000000000')).status).toBe(404);
  });

  it('sets an account default, and refuses bad input without changing anything', async () => {
    const admin = await keyFor('ops2', ['mgpt.admin']);
    const accounts = await call(admin, 'GET', '/v1/accounts');
    expect(accounts.json.data.map((a: { name: string }) => a.name)).toContain('ops2');
    expect((await call(admin, 'PATCH', '/v1/accounts/ops2', { rpm: 60 })).json.rpm).toBe(60);
    expect((await call(admin, 'POST', '/v1/keys', { account: 'ops2', scopes: ['mgpt.everything'] })).status).toBe(400);
    expect((await call(admin, 'POST', '/v1/keys', { account: 'ops2', scopes: 'mgpt.admin' })).status).toBe(400);
    expect((await call(admin, 'POST', '/v1/keys', { account: 'nobody', scopes: ['mgpt.admin'] })).status).toBe(404);
    expect((await call(admin, 'GET', '/v1/keys')).json.data.filter((k: { account: string }) => k.account === accounts.json.data.find((a: { name: string }) => a.name === 'ops2').id)).toHaveLength(1);
  });

  it('is refused (403) to a key without mgpt.admin, and (401) to no key', async () => {
    const plain = await keyFor('plain', ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read']);
    for (const [method, path] of [['GET', '/v1/keys'], ['POST', '/v1/keys'], ['GET', '/v1/accounts'], ['DELETE', '/v1/keys/key_0000000000000000']]) {
      expect((await call(plain, method, path, method === 'POST' ? { account: 'plain', scopes: ['mgpt.admin'] } : undefined)).status, path).toBe(403);
      expect((await fetch(served.server.url + path, { method })).status, path).toBe(401);
    }
  });
});

describe('universes read back (GET /api/mgpt/universes[/{id}])', () => {
  it("lists the user's universes and one's conversation with its tool calls, never its prompt text, and only to its user", async () => {
    const key = await keyFor('tales', ['mgpt.responses:create']);
    const made = await call(key, 'POST', '/api/mgpt/universes', { storedPrompt: 'narrator', displayName: 'Castle' });
    const u = made.json.universe as string;
    served.fake.script({ toolCalls: [{ id: 'call_1', name: 'roll', arguments: '{"sides":6}' }] }, { text: 'The gate opens.' });
    const turn = { model: 'game-1-lite-frozen', universe: u, userInput: 'I roll.', tools: [{ type: 'function', name: 'roll', parameters: { type: 'object' } }] };
    expect((await call(key, 'POST', '/api/mgpt/responses', turn)).json.toolCalls).toHaveLength(1);
    await call(key, 'POST', '/api/mgpt/responses', { ...turn, toolResults: [{ callId: 'call_1', name: 'roll', output: { value: 4 }, ok: true }] });
    const list = await call(key, 'GET', '/api/mgpt/universes');
    expect(list.json.data).toMatchObject([{ id: u, displayName: 'Castle', storedPrompt: 'narrator', messages: 4 }]);
    const one = await call(key, 'GET', `/backend-api/mgpt/universes/${u}`);
    expect(one.json.runtime.conversation.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(one.json.runtime.conversation[1].tool_calls[0].function.name).toBe('roll');
    expect(JSON.stringify(one.json)).not.toContain('You narrate.');
    const other = await keyFor('others', ['mgpt.responses:create']);
    expect((await call(other, 'GET', `/api/mgpt/universes/${u}`)).status).toBe(403);
    expect((await call(other, 'GET', '/api/mgpt/universes')).json.data).toEqual([]);
    expect((await call(key, 'GET', '/api/mgpt/universes/00000000-0000-4000-8000-00000000dead')).status).toBe(404);
  });
});
