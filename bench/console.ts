// The console (issue 36): its weight as a browser downloads it (gzipped), and how long `mgpt console`
// takes from its address being printed (the server ready) to the page signed in and drawn in Chromium.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

/** dist/console's files, gzipped, in KB (the build must have run). */
export function consoleWeightKb(root: string): { total: number; files: Record<string, number> } {
  const files: Record<string, number> = {};
  for (const f of ['index.html', 'app.js', 'app.css']) files[f] = gzipSync(readFileSync(join(root, 'dist', 'console', f)), { level: 9 }).length / 1024;
  return { total: Object.values(files).reduce((a, b) => a + b, 0), files };
}

/** ms from `mgpt console --no-open` printing its address (the server is ready) to the entities page drawn in an open tab; undefined without Chromium. */
export async function consoleLoadMs(bin: string, chromiumPath: string | undefined, runs: number): Promise<number[] | undefined> {
  if (!chromiumPath) return undefined;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'mgpt-bench-console-'));
      const env = { PATH: process.env.PATH, HOME: dir, MGPT_DB: join(dir, 'm.db'), MGPT_CONFIG_DIR: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data'), NO_COLOR: '1' };
      const child = spawn(process.execPath, [bin, 'console', '--no-open'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            if (out.includes('\n')) resolve(out.trim());
          });
          child.on('exit', (code) => reject(new Error(`mgpt console exited ${code}`)));
        });
        // From the address to the page drawn, in a tab already open (a browser's own tab start is not the console's).
        const page = await browser.newPage();
        const t0 = performance.now();
        await page.goto(url);
        await page.getByRole('heading', { level: 1, name: 'Entities' }).waitFor();
        times.push(performance.now() - t0);
        await page.close();
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await browser.close();
  }
  return times;
}
