import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-auth-');

async function serve(name: string): Promise<{ url: string; key: string; stop: () => Promise<unknown> }> {
  const env = cliEnv(`${dir}/${name}`, { MGPT_DB: `${dir}/${name}/served.db` });
  const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
  const server = spawnMgpt(['serve', '--port', '0'], env);
  const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
  return { url, key, stop: () => (server.kill('SIGTERM'), server.result) };
}

// Issue 37, item 3: logout forgets what login stored, login uses the URLs it is given, and
// `mgpt auth status` says where you are signed in, as whom, and whether the server answers.
describe('mgpt login, logout and auth status', () => {
  it('logout clears the URLs; a later login to another server checks only that server', async () => {
    const a = await serve('a');
    const b = await serve('b');
    const client = cliEnv(`${dir}/client`, { MGPT_DB: `${dir}/client/never.db` });
    const none = await mgpt(['auth', 'status'], client);
    expect([none.code, none.stdout]).toEqual([1, 'not signed in to a server (profile default): commands use the local backend\n']);

    expect((await mgpt(['login', '--base-url', a.url, '--entities-url', `${a.url}/v1`, '--key', a.key], client)).code).toBe(0);
    const status = await mgpt(['auth', 'status', '--json'], client);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      profile: 'default', backend: 'remote', signedIn: true, reachable: true, account: 'local',
      baseUrl: a.url, entitiesUrl: `${a.url}/v1`, key: expect.stringMatching(/^mgpt_live_.{4}…$/), scopes: ['mgpt.responses:create'], error: null,
    });
    const human = await mgpt(['auth', 'status'], client);
    expect(human.stdout).toContain(`✓ signed in to ${a.url}/v1 and ${a.url} as account local (profile default, key mgpt_live_`);

    await a.stop();
    const down = await mgpt(['auth', 'status'], client);
    expect(down.code).toBe(7);
    expect(down.stdout).toMatch(/^X the server does not answer/);

    expect((await mgpt(['logout'], client)).code).toBe(0);
    for (const key of ['baseUrl', 'entitiesUrl', 'apiKey']) expect((await mgpt(['config', 'get', key], client)).code).toBe(4);
    expect((await mgpt(['auth', 'status'], client)).code).toBe(1);

    // Only one URL of an mgpt serve: the other is derived from it (never the old, dead one) and
    // checked, so every entity command works after login (it used to store no entities URL).
    const login = await mgpt(['login', '--base-url', b.url, '--key', b.key, '--json'], client);
    expect([login.code, login.stderr]).toEqual([0, '']);
    expect(JSON.parse(login.stdout)).toMatchObject({ baseUrl: b.url, entitiesUrl: `${b.url}/v1`, checked: ['entities', 'universes'] });
    const onB = await mgpt(['auth', 'status', '--json'], client);
    expect(onB.code).toBe(0);
    expect(JSON.parse(onB.stdout)).toMatchObject({ signedIn: true, baseUrl: b.url, entitiesUrl: `${b.url}/v1`, account: 'local' });
    expect((await mgpt(['entities', 'create', '--name', 'after-login'], client)).code).toBe(0);
    const byEntities = await mgpt(['login', '--entities-url', `${b.url}/v1`, '--key', b.key, '--json'], client);
    expect(JSON.parse(byEntities.stdout)).toMatchObject({ baseUrl: b.url, entitiesUrl: `${b.url}/v1`, checked: ['entities', 'universes'] });

    const refused = await mgpt(['auth', 'status'], { ...client, MGPT_ENTITIES_URL: `${b.url}/v1`, MGPT_API_KEY: 'mgpt_live_0000000000000000.' + 'x'.repeat(43) });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/^X the server refused the key/);
    await b.stop();
  });

  it('one URL of a server that is not an mgpt serve is refused, naming the flag to add, and stores nothing', async () => {
    const other = createServer((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const client = cliEnv(`${dir}/elsewhere`, { MGPT_DB: `${dir}/elsewhere/never.db` });
    try {
      const r = await mgpt(['login', '--base-url', url, '--key', 'mgpt_live_0000000000000000.' + 'x'.repeat(43)], client);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('is not an mgpt serve answering both APIs');
      expect(r.stderr).toContain('pass --entities-url too');
      const e = await mgpt(['login', '--entities-url', `${url}/v1`, '--key', 'mgpt_live_0000000000000000.' + 'x'.repeat(43)], client);
      expect([e.code, e.stderr]).toEqual([2, expect.stringContaining('pass --base-url too')]);
      expect((await mgpt(['config', 'get', 'apiKey'], client)).code).toBe(4);
    } finally {
      other.close();
    }
  });
});
