import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import { expect } from 'vitest';
import { didNotRun } from './tool.js';

/**
 * The browser the console tests drive: the system's Chromium (Debian's `chromium`, which .ci/run
 * installs), found on PATH. Where there is none, says so loudly and returns null (the caller
 * skips), except under CI (`CI` or `MGPT_TEST_REQUIRE_CHROMIUM`, which .ci/run sets), where it throws.
 */
export function findChromium(what: string): string | null {
  const names = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
  const found = names.map((n) => spawnSync('sh', ['-c', `command -v ${n}`], { encoding: 'utf8' }).stdout.trim()).find(Boolean);
  if (found) return found;
  const why = 'no Chromium on PATH (apt-get install chromium; .ci/run does)';
  if (process.env.CI || process.env.MGPT_TEST_REQUIRE_CHROMIUM) throw new Error(`${what}: ${why} (CI must run the browser tests)`);
  didNotRun(what, why);
  return null;
}

export async function launch(executablePath: string): Promise<Browser> {
  // As root (containers, CI) Chromium needs --no-sandbox.
  const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  return chromium.launch({ executablePath, args });
}

/** Where a test's screenshots go (gitignored): test-output/<name>/. */
export function outputDir(name: string): string {
  const dir = fileURLToPath(new URL(`../../test-output/${name}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** A screenshot of the page at each size (1280x800 and 390x844), back to the first size after. */
export async function shots(page: Page, dir: string, step: string): Promise<string[]> {
  const files: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize(size);
    const file = join(dir, `${step}-${size.width}x${size.height}.png`);
    await page.screenshot({ path: file, fullPage: false });
    files.push(file);
  }
  await page.setViewportSize(SIZES[0]);
  return files;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (none expected). */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  // Evaluated by the driver, not as a page script: the console's policy rightly refuses inline scripts.
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`)) as Array<{
    id: string;
    impact: string;
    nodes: string[];
  }>;
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), where).toEqual([]);
}

/** Signs in on the sign-in page with `key`, and waits for the entities page. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Entities' }).waitFor();
}
