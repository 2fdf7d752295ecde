import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { call, keyFor, serve } from './rate-limit-scenario.js';

// Setting limits from the command line, and the remote backend waiting out a server's 429.
const dir = tempDir('mgpt-rate-cli-');

describe('mgpt keys and accounts: rate limits', () => {
  const env = cliEnv(dir, { MGPT_DB: `${dir}/limits.db` });

  it('sets, shows and clears limits; refuses a bad one with a clear error and changes nothing', async () => {
    const key = await keyFor(env, 'acme', ['--rpm', '60', '--tpm', '100000']);
    const id = `key_${key.slice('mgpt_live_'.length).split('.')[0]}`;
    const list = JSON.parse((await mgpt(['keys', 'list', '--json'], env)).stdout).data;
    expect(list).toContainEqual(expect.objectContaining({ id, rpm: 60, tpm: 100000 }));
    const cleared = await mgpt(['keys', 'update', id.slice(0, 8), '--rpm', 'none', '--json'], env);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ id, rpm: null, tpm: 100000 });
    const account = await mgpt(['accounts', 'update', 'acme', '--rpm', '30', '--json'], env);
    expect(JSON.parse(account.stdout)).toMatchObject({ name: 'acme', rpm: 30, tpm: null });
    const table = await mgpt(['accounts', 'list'], env);
    expect(table.stdout).toMatch(/\tacme\t.*\t30\tnone$/m);
    for (const [args, message] of [
      [['keys', 'update', id, '--rpm', '0'], /^error: rpm must be a whole number from 1 to 1000000000, or none to clear it$/m],
      [['keys', 'update', id, '--tpm', '1.5'], /^error: --tpm must be a whole number or none, got "1.5"$/m],
      [['keys', 'update', id], /^error: nothing to update\nhint: give --rpm N, --tpm N, or none to clear one$/m],
      [['keys', 'create', '--account', 'acme', '--scopes', 'mgpt.responses:create', '--rpm', '2000000000'], /^error: rpm must be a whole number/m],
    ] as const) {
      const r = await mgpt([...args], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect((await mgpt(['accounts', 'update', 'nobody', '--rpm', '5'], env)).code).toBe(4);
    expect((await mgpt(['keys', 'update', 'key_0000000000000000', '--rpm', '5'], env)).code).toBe(4);
    // Nothing above changed the key.
    expect(JSON.parse((await mgpt(['keys', 'list', '--json'], env)).stdout).data).toContainEqual(expect.objectContaining({ id, rpm: null, tpm: 100000 }));
  });

  it('the remote backend waits out a 429 for the time the server asks, and says so', async () => {
    const rpm = 10;
    const key = await keyFor(env, 'remote-team', ['--rpm', String(rpm)]);
    const server = await serve(env);
    try {
      const client = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: server.url, MGPT_ENTITIES_URL: `${server.url}/v1`, MGPT_API_KEY: key });
      const id = (await mgpt(['entities', 'create', '--name', 'patient'], client)).stdout.trim();
      await spendTheMinute(server.url, key);
      const r = await mgpt(['send', id, 'after the wait'], client);
      // How long is the machine's business (a loaded one spends the minute slowly): the client must
      // wait what the server asked, in Retry-After's whole seconds, and no more than one request's share.
      const m = /^mgpt: rate limited by the server: rate limit reached for requests per minute \(rpm\): limit 10, remaining 0; try again in (\S+); retrying in (\d+)s$/m.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      const asked = seconds(m![1]!);
      const waited = Number(m![2]);
      expect(waited).toBeGreaterThanOrEqual(Math.max(1, asked));
      expect(waited - asked).toBeLessThanOrEqual(1.01);
      expect(waited).toBeLessThanOrEqual(60 / rpm);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('after the wait');
    } finally {
      await server.stop();
    }
  }, 60_000);
});

/**
 * Spends the key's allowance until a request is refused right after one was admitted: the wait
 * then left is a whole request's share (60 s / rpm), however long the spending took, so the
 * client started next is refused too, even on a loaded machine. A model nobody serves is still a
 * request that was admitted.
 */
async function spendTheMinute(url: string, key: string): Promise<void> {
  let admitted = false;
  for (let i = 0; i < 100; i++) {
    const { status } = await call(url, key, 'POST', '/v1/chat/completions', { model: 'nope', messages: [] });
    expect([404, 429]).toContain(status);
    if (status === 429 && admitted) return;
    admitted = status === 404;
  }
  throw new Error('the key was never refused right after an admitted request');
}

/** A wait as the server writes it (core/rate-limits durationText): `870ms` or `5.87s`, in seconds. */
function seconds(text: string): number {
  const m = /^([\d.]+)(ms|s)$/.exec(text);
  if (!m) throw new Error(`not a wait: ${text}`);
  return Number(m[1]) / (m[2] === 'ms' ? 1000 : 1);
}
