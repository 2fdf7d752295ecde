import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// `mgpt console` revokes its full-admin key when it stops, but a console killed outright cannot:
// its key expires on its own a lifetime after the console last renewed it. The lifetime is short
// here (--key-lifetime 3s) so the test waits seconds, not the default five minutes.
const dir = tempDir('mgpt-console-key-');
const env = cliEnv(join(dir, 'c'));

/** The child's first line on stdout; fails with its stderr if it exits first. */
function firstLine(child: ReturnType<typeof spawnMgpt>): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    void child.result.then((r) => reject(new Error(`mgpt exited (code ${r.code}) before its address; stderr: ${r.stderr}`)));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const whoami = (base: string, key: string) => fetch(`${base}/v1/whoami`, { headers: { Authorization: `Bearer ${key}` } });
interface ListedKey { id: string; expiresAt: string | null; revokedAt: string | null }
const listed = async (id: string) => (JSON.parse((await mgpt(['keys', 'list', '--json'], env)).stdout) as { data: ListedKey[] }).data.find((k) => k.id === id)!;

describe("mgpt console's key", () => {
  it('works while the console runs (renewed past its lifetime), and stops working within its lifetime after a SIGKILL', async () => {
    const consoleProc = spawnMgpt(['console', '--no-open', '--key-lifetime', '3s'], env);
    const url = await firstLine(consoleProc);
    const base = new URL(url).origin;
    const handoff = await fetch(`${base}/console/handoff`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code: url.split('#code=')[1] }) });
    const { key } = (await handoff.json()) as { key: string };
    const me = (await (await whoami(base, key)).json()) as { id: string };
    const first = await listed(me.id);
    expect(Date.parse(first.expiresAt!) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(first.expiresAt!) - Date.now()).toBeLessThanOrEqual(3000);
    // Twice the lifetime later the console still runs, so its key still works: it was renewed.
    await sleep(6500);
    expect((await whoami(base, key)).status).toBe(200);
    expect(Date.parse((await listed(me.id)).expiresAt!)).toBeGreaterThan(Date.parse(first.expiresAt!));

    consoleProc.kill('SIGKILL');
    await consoleProc.result;
    const killedAt = Date.now();
    // Nothing revoked it; another server on the same database refuses it once the lifetime has passed.
    expect((await listed(me.id)).revokedAt).toBeNull();
    const serve = spawnMgpt(['serve', '--port', '0'], env);
    try {
      const served = await firstLine(serve);
      let res = await whoami(served, key);
      while (res.status === 200 && Date.now() - killedAt < 20_000) {
        await sleep(100);
        res = await whoami(served, key);
      }
      expect(res.status).toBe(401);
      // Its end was set by the console's last renewal, before the kill: at most a lifetime after it.
      expect(Date.parse((await listed(me.id)).expiresAt!)).toBeLessThanOrEqual(killedAt + 3000);
      expect(((await res.json()) as { error: string }).error).toMatch(/^this API key expired at \d{4}-\d\d-\d\dT/);
      // And stays refused: nothing renews it any more.
      await sleep(1000);
      expect((await whoami(served, key)).status).toBe(401);
    } finally {
      serve.kill('SIGTERM');
      await serve.result;
    }
    // keys list shows when it expired: the ISO time when piped and in --json.
    const row = (await mgpt(['keys', 'list'], env)).stdout.trim().split('\n').find((l) => l.startsWith(me.id))!;
    expect(row.split('\t').at(-1)).toBe((await listed(me.id)).expiresAt);
    expect(Date.parse(row.split('\t').at(-1)!)).toBeLessThan(Date.now());
  }, 60_000);

  it('refuses a lifetime under a second, and keys made by mgpt keys create never expire', async () => {
    const r = await mgpt(['console', '--no-open', '--key-lifetime', '200ms'], env);
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/^error: --key-lifetime must be a duration such as 500ms, 10s or 2m \(at least 1000 ms\)/)]);
    const created = await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create', '--json'], env);
    expect((await listed(JSON.parse(created.stdout).id)).expiresAt).toBeNull();
  });
});
