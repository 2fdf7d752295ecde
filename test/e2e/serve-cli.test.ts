import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const json = (s: string) => JSON.parse(s);

describe('mgpt keys and mgpt serve', () => {
  it('creates a key shown once, lists keys without secrets, revokes', async () => {
    const env = cliEnv(dir);
    const k = json((await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create,mgpt.logs:read', '--json'], env)).stdout);
    expect(k).toEqual({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^mgpt_live_[0-9a-f]{16}\.[\w-]{43}$/), scopes: ['mgpt.responses:create', 'mgpt.logs:read'], account: 'local', rpm: null, tpm: null });
    const list = await mgpt(['keys', 'list', '--json'], env);
    expect(list.stdout).not.toContain(k.key.split('.')[1]);
    expect(json(list.stdout).data).toEqual([expect.objectContaining({ id: k.id, revokedAt: null })]);
    expect((await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'admin'], env)).code).toBe(2);
    expect((await mgpt(['keys', 'create', '--account', 'nobody', '--scopes', 'mgpt.logs:read'], env)).code).toBe(4);
    const revoked = json((await mgpt(['keys', 'revoke', k.id, '--json'], env)).stdout);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect((await mgpt(['keys', 'revoke', 'key_nope'], env)).code).toBe(4);
  });

  it('--log-format json writes one line per request: route, status, time, key id (never its secret), entity or universe, tokens', async () => {
    const env = cliEnv(dir, { MGPT_DB: `${dir}/logged.db` });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0', '--log-format', 'json'], env);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    const H = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const id = (await (await fetch(`${url}/v1/entities`, { method: 'POST', headers: H, body: JSON.stringify({ model: 'mgpt-1-27b' }) })).json()).id;
    const buffered = await fetch(`${url}/v1/entities/${id}/messages`, { method: 'POST', headers: { ...H, 'x-request-id': 'req-buffered' }, body: JSON.stringify({ content: 'echo me', stream: false }) });
    const usage = (await buffered.json()).usage;
    const streamed = await fetch(`${url}/v1/entities/${id}/messages`, { method: 'POST', headers: H, body: JSON.stringify({ content: 'and me' }) });
    await streamed.text();
    await fetch(`${url}/v1/entities/nope`, { headers: H });
    await fetch(`${url}/v1/entities`);
    // /metrics is on by default, with no key.
    const scrape = await (await fetch(`${url}/metrics`)).text();
    expect(scrape).toContain('mgpt_http_requests_total{route="/v1/entities/:id/messages",status="200"} 2');
    expect(scrape).toContain('mgpt_turns_total{kind="entity"} 2');
    server.kill('SIGTERM');
    const r = await server.result;
    expect(r.code).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const keyId = `key_${key.slice('mgpt_live_'.length).split('.')[0]}`;
    expect(lines.filter((l) => l.route !== '/metrics')).toEqual([
      expect.objectContaining({ method: 'POST', route: '/v1/entities', status: 201, keyId, accountId: 'local' }),
      { time: expect.any(String), requestId: 'req-buffered', method: 'POST', route: '/v1/entities/:id/messages', status: 200, durationMs: expect.any(Number),
        keyId, accountId: 'local', entityId: id, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
      expect.objectContaining({ route: '/v1/entities/:id/messages', status: 200, entityId: id, promptTokens: expect.any(Number), requestId: streamed.headers.get('x-request-id') }),
      expect.objectContaining({ route: '/v1/entities/:id', status: 404, entityId: 'nope' }),
      expect.objectContaining({ route: '/v1/entities', status: 401 }),
    ]);
    expect(lines[4]).not.toHaveProperty('keyId');
    expect(r.stderr).not.toContain(key.split('.')[1]);
    const quiet = spawnMgpt(['serve', '--port', '0', '--no-metrics'], env);
    const quietUrl = await new Promise<string>((resolve) => quiet.stdout!.once('data', (d) => resolve(String(d).trim())));
    expect((await fetch(`${quietUrl}/metrics`)).status).toBe(404);
    quiet.kill('SIGTERM');
    await quiet.result;
    const bad = await mgpt(['serve', '--port', '0', '--log-format', 'xml'], env);
    expect([bad.code, bad.stderr]).toEqual([2, 'error: --log-format must be text, json or off, got "xml"\n']);
  });

  it('serves on a free port, answers with a key, and stops cleanly on SIGTERM', async () => {
    const env = cliEnv(dir, { MGPT_DB: `${dir}/served.db` });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], env);
    const url = await new Promise<string>((resolve) => {
      let out = '';
      server.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const created = await fetch(`${url}/v1/entities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mgpt-1-27b', name: 'served' }),
    });
    expect(created.status).toBe(201);
    const res = await fetch(`${url}/v1/entities/${(await created.json()).id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'echo me', stream: false }),
    });
    expect((await res.json()).choices[0].message.content).toBe('echo me');
    expect((await fetch(`${url}/v1/entities`)).status).toBe(401);
    server.kill('SIGTERM');
    const r = await server.result;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+[\s\S]*stopped/);
  });
});

describe('mgpt serve: key revocation', () => {
  it('a key revoked by `mgpt keys revoke` in another process is refused by the running server on its next request', async () => {
    const env = cliEnv(dir, { MGPT_DB: `${dir}/revoke.db` });
    const k = json((await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create', '--json'], env)).stdout);
    const server = spawnMgpt(['serve', '--port', '0'], env);
    const url = await new Promise<string>((resolve) => {
      let out = '';
      server.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
    });
    const list = () => fetch(`${url}/v1/entities`, { headers: { authorization: `Bearer ${k.key}` } });
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200); // checked, then kept
    expect((await mgpt(['keys', 'revoke', k.id], env)).code).toBe(0);
    const refused = await list();
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toMatch(/revoked/);
    server.kill('SIGTERM');
    expect((await server.result).code).toBe(0);
  });
});

describe('mgpt serve: slow-request limits', () => {
  it('takes them as flags: a body trickled past --request-timeout is cut with 408; bad values exit 2', async () => {
    const env = cliEnv(dir, { MGPT_DB: `${dir}/limits.db` });
    expect(await mgpt(['serve', '--request-timeout', 'soon'], env)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --request-timeout must be a duration/m) });
    expect((await mgpt(['serve', '--headers-timeout', '2m', '--request-timeout', '1m'], env)).code).toBe(2);
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0', '--request-timeout', '1s', '--headers-timeout', '1s', '--keep-alive-timeout', '2s', '--max-connections', '50'], env);
    const url = new URL(await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim()))));
    const answer = await new Promise<string>((resolve) => {
      const s = connect(Number(url.port), url.hostname, () => {
        s.write(`POST /v1/entities HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
      });
      let got = '';
      // One byte every 100 ms: 10 s for the body, far over the 1 s limit; stops when cut.
      let sent = 0;
      const t = setInterval(() => (s.writable && ++sent < 99 ? s.write(' ') : clearInterval(t)), 100);
      s.on('data', (d) => (got += d));
      s.on('error', () => {});
      s.on('close', () => {
        clearInterval(t);
        resolve(got);
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/x-request-id: \S+/i);
    server.kill('SIGTERM');
    expect((await server.result).code).toBe(0);
  });
});

describe('mgpt login, logout and the remote backend from the CLI', () => {
  it('checks the key before storing it, then runs commands against the server', async () => {
    const serverEnv = cliEnv(dir, { MGPT_DB: `${dir}/remote.db` });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create,mgpt.logs:read'], serverEnv)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    // The client: its own config dir and a database it must never touch.
    const client = cliEnv(`${dir}/client`, { MGPT_DB: `${dir}/client/never.db` });
    const bad = await mgpt(['login', '--base-url', url, '--entities-url', `${url}/v1`, '--key', 'mgpt_live_0000000000000000.' + 'x'.repeat(43)], client);
    expect([bad.code, bad.stderr]).toEqual([3, expect.stringMatching(/^error: the server refused the key: invalid API key/m)]);
    const ok = await mgpt(['login', '--base-url', url, '--entities-url', `${url}/v1`, '--json'], client, key + '\n');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ backend: 'remote', apiKey: expect.stringMatching(/^mgpt_live_.{4}…$/), checked: ['entities', 'universes'] });
    expect((await mgpt(['config', 'list'], client)).stdout).not.toContain(key.split('.')[1]);
    const id = (await mgpt(['entities', 'create', '--name', 'far'], client)).stdout.trim();
    const sent = await mgpt(['send', 'far', 'over the wire'], client);
    expect(sent).toMatchObject({ code: 0, stdout: 'over the wire\n' });
    const history = JSON.parse((await mgpt(['history', id, '--json'], client)).stdout);
    expect(history.data.map((m: any) => m.content)).toEqual(['over the wire', 'over the wire']);
    expect((await mgpt(['export', id, '-o', `${dir}/far.tar`], client)).code).toBe(0);
    // An mgpt archive imports over the wire too (POST /v1/imports?from=mgpt), as a new entity.
    const imp = await mgpt(['import', `${dir}/far.tar`, '--json'], client);
    expect(imp.code, imp.stderr).toBe(0);
    const copy = JSON.parse(imp.stdout).entity_id ?? JSON.parse(imp.stdout).id;
    expect(copy).not.toBe(id);
    expect(JSON.parse((await mgpt(['history', copy, '--json'], client)).stdout).data.map((m: any) => m.content)).toEqual(['over the wire', 'over the wire']);
    const missing = await mgpt(['entities', 'show', '00000000-0000-4000-8000-000000000000'], client);
    expect(missing.code).toBe(4);
    expect((await mgpt(['logout'], client)).code).toBe(0);
    expect((await mgpt(['entities', 'list', '--json'], client)).stdout).not.toContain(id);
    server.kill('SIGTERM');
    await server.result;
  });
});

describe('mgpt serve on a port that is taken', () => {
  it('says the port is in use and how to get a free one, not EADDRINUSE', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as import('node:net').AddressInfo).port;
    try {
      const r = await mgpt(['serve', '--port', String(port)], cliEnv(`${dir}/taken`));
      expect([r.code, r.stderr]).toEqual([1, `error: port ${port} on 127.0.0.1 is in use\nhint: --port 0 picks a free one (the URL is printed on stdout)\n`]);
    } finally {
      taken.close();
    }
  });
});
