import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { cliEnv, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { findChromium, launch, outputDir, shots } from '../helpers/browser.js';
import { tempDir } from '../helpers/temp.js';

// `mgpt console` as a person runs it (the built bin/mgpt: npm run build first), on a machine with no
// display: it prints the address, the page signs itself in with the one-time code, and the key it
// made is revoked when it stops. Skips with a banner without Chromium (fails under CI).
const chromiumPath = findChromium('the mgpt console command test');

/** The child's first line on stdout (its address); fails with stderr if it exits first. */
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

describe('mgpt serve --no-console', () => {
  it('serves no page at /, and the API as before', async () => {
    const child = spawnMgpt(['serve', '--port', '0', '--no-console'], cliEnv(join(tempDir(), 'nc')));
    const base = await firstLine(child);
    expect((await fetch(base + '/')).status).toBe(404);
    expect((await fetch(base + '/console/app.js')).status).toBe(404);
    expect((await fetch(base + '/v1/entities')).status).toBe(401);
    child.kill('SIGTERM');
    await child.result;
  });
});

describe.skipIf(!chromiumPath)('mgpt console', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('prints the address on a headless machine; the page signs in once with its code; the key never shows and is revoked at the end', async () => {
    const env = cliEnv(join(tempDir(), 'console'));
    expect(env.DISPLAY).toBeUndefined();
    const child = spawnMgpt(['console'], env);
    const url = await firstLine(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#code=[A-Za-z0-9_-]{32}$/);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    await page.getByRole('heading', { level: 1, name: 'Entities' }).waitFor();
    // The code is gone from the address once used, and the key is in the tab's sessionStorage only.
    expect(page.url()).toMatch(/\/#\/entities$/);
    const key = (await page.evaluate(() => sessionStorage.getItem('mgpt.console.key')))!;
    expect(key).toMatch(/^mgpt_live_/);
    await shots(page, outputDir('console-command'), '01-signed-in');
    const base = new URL(url).origin;
    const who = await (await fetch(base + '/v1/whoami', { headers: { Authorization: `Bearer ${key}` } })).json();
    expect(who.scopes).toContain('mgpt.admin');
    // The code works once.
    const again = await fetch(base + '/console/handoff', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code: url.split('#code=')[1] }) });
    expect(again.status).toBe(401);
    child.kill('SIGTERM');
    const out = await child.result;
    expect(out.code).toBe(0);
    expect(out.stdout + out.stderr).not.toContain(key.split('.')[1]);
    expect(requests.filter((u) => u.includes(key.split('.')[1]))).toEqual([]);
    // Stopped: the session's key is revoked.
    const keys = (JSON.parse((await mgptBinary(['keys', 'list', '--json'], env)).stdout) as { data: Array<{ id: string; revokedAt: string | null }> }).data;
    expect(keys.find((k) => k.id === who.id)?.revokedAt).not.toBeNull();
    await page.close();
  });
});
