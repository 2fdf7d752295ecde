import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, firstOutput, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// The real binary as a remote client of the real binary's server (or of a tiny scripted one).
const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

describe('mgpt send over the remote backend', () => {
  it('Ctrl-C prints the same cancelled message and exit code as the local backend', async () => {
    const serverEnv = cliEnv(dir, { MGPT_DB: `${dir}/served.db`, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    const client = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key, MGPT_DB: `${dir}/client/never.db` });
    const id = (await mgpt(['entities', 'create', '--name', 'far'], client)).stdout.trim();
    const abortedBefore = fake.aborted;
    fake.script({ text: ['a ', 'long ', 'reply ', 'nobody ', 'waits ', 'for'], chunkDelayMs: 300 });
    const child = spawnMgpt(['send', id, 'never mind'], client);
    await firstOutput(child);
    child.kill('SIGINT');
    const r = await child.result;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/^error: cancelled: nothing of this turn was stored$/m);
    expect(r.stderr).not.toMatch(/operation was aborted/);
    const history = JSON.parse((await mgpt(['history', id, '--json'], client)).stdout);
    expect(history.data).toEqual([]);
    expect(fake.aborted - abortedBefore).toBe(1);
    server.kill('SIGTERM');
    await server.result;
  });

  it('a server that keeps answering 429 ends in exit 7 saying it was rate limited', async () => {
    let hits = 0;
    const tiny = createServer((_req, res) => {
      hits++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': hits === 1 ? '1' : '0' });
      res.end(JSON.stringify({ error: 'too many requests' }));
    });
    await new Promise<void>((r) => tiny.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(tiny.address() as AddressInfo).port}`;
    const client = cliEnv(`${dir}/client429`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: 'k' });
    const r = await mgpt(['entities', 'list'], client);
    tiny.close();
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/^error: rate limited by the server: too many requests/m);
    expect(hits).toBe(3);
  });
});

describe('local administration against a remote server', () => {
  it('keys, accounts, prompts and universes list/show say they run on the server host (exit 2), touching no database', async () => {
    const client = cliEnv(`${dir}/admin-client`, {
      MGPT_BACKEND: 'remote',
      MGPT_BASE_URL: 'http://127.0.0.1:9',
      MGPT_ENTITIES_URL: 'http://127.0.0.1:9/v1',
      MGPT_API_KEY: 'k',
      MGPT_DB: `${dir}/admin-client/never.db`,
    });
    const cases: Array<[string[], string]> = [
      [['keys', 'list'], 'keys list'],
      [['keys', 'create', '--account', 'local', '--scopes', 'mgpt.logs:read'], 'keys create'],
      [['keys', 'revoke', 'key_0123'], 'keys revoke'],
      [['accounts', 'list'], 'accounts list'],
      [['accounts', 'create', 'acme'], 'accounts create'],
      [['accounts', 'topup', 'local', '5'], 'accounts topup'],
      [['prompts', 'list'], 'prompts list'],
      [['prompts', 'show', 'narrator'], 'prompts show'],
      [['prompts', 'add', 'narrator', 'You narrate.'], 'prompts add'],
      [['universes', 'list'], 'universes list'],
      [['universes', 'show', '00000000-0000-4000-8000-000000000000'], 'universes show'],
    ];
    for (const [args, what] of cases) {
      const r = await mgpt(args, client);
      expect([args.join(' '), r.code, r.stdout, r.stderr]).toEqual([
        args.join(' '),
        2,
        '',
        `error: ${what} is not part of the remote API\nhint: run it on the server host: mgpt --backend local ${what}\n`,
      ]);
    }
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${dir}/admin-client/never.db`)).toBe(false);
  });
});

describe('a remote backend says what the local one says (issue 37, item 7)', () => {
  it('where the local entities went, the rotation notice, and logs without config set userId', async () => {
    const serverEnv = cliEnv(`${dir}/said`, { MGPT_DB: `${dir}/said/served.db`, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_WINDOW_BUDGET: '200' });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create,mgpt.logs:read'], serverEnv)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    const client = cliEnv(`${dir}/said/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
    try {
      const empty = await mgpt(['entities', 'list'], client);
      expect(empty.code).toBe(0);
      expect(empty.stderr).toContain('your local ones are still in the local database: `mgpt --backend local entities list` shows them');

      const id = (await mgpt(['entities', 'create', '--name', 'far'], client)).stdout.trim();
      let said = '';
      for (let i = 0; i < 10 && !said.includes('window rotated'); i++) {
        said += (await mgpt(['send', id, `message ${i} with a handful of words to fill the window`, '--verbose'], client)).stderr;
      }
      expect(said).toMatch(/window rotated: messages 1–\d+ were folded into a \d+-token summary/);

      const logs = await mgpt(['logs', '--json'], client);
      expect([logs.code, logs.stderr]).toEqual([0, '']);
      expect(JSON.parse(logs.stdout)).toMatchObject({ data: expect.any(Array), page: 1 });
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });
});
