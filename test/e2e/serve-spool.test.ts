import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// Uploads to POST /v1/imports wait in a spool folder of mgpt's own (up to 8 GiB each), not in the
// OS's temporary folder, and what a killed server left there is removed when serve starts again.
const dir = tempDir('mgpt-spool-');
const spool = join(dir, 'spool');
const env = cliEnv(dir, { MGPT_SPOOL_DIR: spool });

async function startServe(): Promise<{ server: ReturnType<typeof spawnMgpt>; url: string }> {
  const server = spawnMgpt(['serve', '--port', '0'], env);
  const url = await new Promise<string>((resolve, reject) => {
    server.stdout!.once('data', (d) => resolve(String(d).trim()));
    void server.result.then((r) => reject(new Error(`serve exited: ${r.stderr}`)));
  });
  return { server, url };
}

const entries = () => readdirSync(spool).sort();

describe('the upload spool', () => {
  it('keeps an upload in the spool folder while it arrives; after a SIGKILL the next serve start removes it, and only what no running process owns', async () => {
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const first = await startServe();
    // An upload that never finishes: the server spools what has arrived.
    const req = request(`${first.url}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) } });
    req.on('error', () => {});
    req.write(Buffer.alloc(256 * 1024, 0x20));
    const files = () => {
      try {
        return entries().flatMap((d) => readdirSync(join(spool, d)).map((f) => `${d}/${f}`));
      } catch {
        return [];
      }
    };
    for (let i = 0; i < 200 && files().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    const spooled = entries();
    expect(spooled).toEqual([expect.stringMatching(new RegExp(`^mgpt-.+-${first.server.pid}-[A-Za-z0-9]+$`))]);
    expect(files()).toEqual([`${spooled[0]}/export`]);
    first.server.kill('SIGKILL');
    await first.server.result;
    req.destroy();
    expect(entries()).toEqual(spooled);

    // Beside it: a spool of a process still running (this test), one of another host, and a file not of mgpt's naming.
    const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
    const live = `mgpt-${host}-${process.pid}-abc123`;
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const deadToo = `mgpt-${host}-${dead}-xyz789`;
    const otherHost = `mgpt-elsewhere.example-${dead}-qqq111`;
    for (const d of [live, deadToo, otherHost]) mkdirSync(join(spool, d));
    writeFileSync(join(spool, deadToo, 'export'), 'left over');
    writeFileSync(join(spool, 'notes.txt'), 'not a spool');

    const second = await startServe();
    try {
      expect(entries()).toEqual([live, otherHost, 'notes.txt'].sort());
    } finally {
      second.server.kill('SIGTERM');
    }
    const r = await second.server.result;
    expect(r.stderr).toContain(`mgpt serve: removed 2 import spools left in ${spool} by a process that stopped\n`);
  }, 60_000);

  it('an upload that is answered leaves nothing in the spool folder', async () => {
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const { server, url } = await startServe();
    try {
      const before = entries();
      const res = await fetch(`${url}/v1/imports?dry_run=true`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '[]' });
      expect(res.status).toBeLessThan(500);
      await res.text();
      expect(entries()).toEqual(before);
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });
});
