import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { expectAccessible, findChromium, launch, outputDir, shots, signIn } from '../helpers/browser.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// The rotation timeline and pinned memory (issue 33's routes) against a real server: rotations a
// turn made, a manual fold taken back (no turn, so no window to show), a block of pinned memory,
// and a turn whose window was never recorded (a database from before those records), which the
// page explains with the server's words instead of failing.
const chromiumPath = findChromium('the console memory-view tests');
const dir = outputDir('console-memory');

interface Rotation {
  trigger: string;
  seq: number | null;
  from_seq: number;
  to_seq: number;
  summary: { text: string; tokens: number };
  usage: { prompt_tokens: number; cached_tokens: number | null; completion_tokens: number };
  blocks_before: unknown[];
  blocks_after: unknown[];
  undone: boolean;
}

describe.skipIf(!chromiumPath)('the memory views in Chromium', () => {
  const db = join(tempDir(), 'console-memory.db');
  let fake: FakeOpenAI;
  let engine: Engine;
  let server: Listening;
  let browser: Browser;
  let page: Page;
  let key: string;
  let id: string;
  let rotations: Rotation[];
  const api = async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
    const res = await fetch(server.url + path, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as T;
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    engine = makeEngine(tempDir(), { fake, db });
    server = await listen(engine, '127.0.0.1', 0);
    key = (await engine.keys.create('local', [...SCOPES])).key!;
    id = (await api<{ id: string }>('/v1/entities', { method: 'POST', body: { model: 'mgpt-1-27b', name: 'Sam', instructions: 'Be brief.' } })).id;
    await api(`/v1/entities/${id}`, { method: 'PATCH', body: { budget_tokens: 300 } });
    // Model text that looks like markup: it reaches the summaries, and must stay text there.
    await api(`/v1/entities/${id}/messages`, { method: 'POST', body: { content: '<b>not bold</b> is what I write', stream: false } });
    for (let i = 2; (await api<{ rotations: Rotation[] }>(`/v1/entities/${id}/rotations`)).rotations.length < 2; i++) {
      expect(i, 'two rotations within 40 turns').toBeLessThan(40);
      await api(`/v1/entities/${id}/messages`, { method: 'POST', body: { content: `message ${i} about the hold of the ship`, stream: false } });
    }
    await api(`/v1/entities/${id}/rotations`, { method: 'POST', body: { action: 'rotate' } });
    await api(`/v1/entities/${id}/rotations`, { method: 'POST', body: { action: 'undo' } });
    await api(`/v1/entities/${id}/memory/name`, { method: 'PUT', body: { text: 'The user is called Sam.' } });
    rotations = (await api<{ rotations: Rotation[] }>(`/v1/entities/${id}/rotations`)).rotations;
    browser = await launch(chromiumPath!);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(server.url + '/');
    await signIn(page, key);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    engine?.close();
    await fake?.close();
  });

  it('draws the rotation history newest first, the undone manual fold without a window to show, and pinned memory in the head', async () => {
    expect(rotations.map((r) => [r.trigger, r.undone])).toEqual([['turn', false], ['turn', false], ['manual', true]]);
    await page.goto(`${server.url}/#/entities/${id}`);
    await page.locator('ol.timeline li').first().waitFor();
    const items = await page.locator('ol.timeline li.rotation').allTextContents();
    const newestFirst = [...rotations].reverse();
    expect(items).toHaveLength(3);
    newestFirst.forEach((r, i) => {
      const cached = r.usage.cached_tokens === null ? '' : ` (${r.usage.cached_tokens.toLocaleString('en-US')} cached)`;
      expect(items[i]).toContain(`${r.trigger}${r.seq === null ? '' : ` at #${r.seq}`}${r.undone ? ' (undone)' : ''}: folded ${r.from_seq}–${r.to_seq} into ${r.summary.tokens} tokens`);
      expect(items[i]).toContain(`window ${r.blocks_before.length} → ${r.blocks_after.length} blocks`);
      expect(items[i]).toContain(`${r.usage.prompt_tokens.toLocaleString('en-US')} prompt${cached} + ${r.usage.completion_tokens}`);
    });
    expect(await page.locator('ol.timeline li.undone').count()).toBe(1);
    expect(await page.locator('ol.timeline li.undone button').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Show the window at turn/ }).allTextContents()).toEqual(
      newestFirst.filter((r) => r.seq !== null).map((r) => `Show the window at turn ${r.seq}`),
    );
    // Each summary's text, as text: the markup the user wrote made no element.
    for (const s of await page.locator('ol.timeline details summary').all()) await s.click();
    expect(await page.locator('ol.timeline pre').allTextContents()).toEqual(newestFirst.map((r) => r.summary.text));
    expect(rotations[0].summary.text).toContain('<b>not bold</b>');
    expect(await page.locator('ol.timeline b').count()).toBe(0);
    // Pinned memory: listed, and counted in the bar's head with the instructions, both as the engine counts the request's messages.
    const memory = await api<{ tokens: number }>(`/v1/entities/${id}/memory`);
    const { parts } = await api<{ parts: { instructions: { tokens: number }; memory: { tokens: number } } }>(`/v1/entities/${id}/window?prompt=true`);
    expect(await page.locator('dl.pinned').textContent()).toContain('The user is called Sam.');
    expect(parts.memory.tokens).toBeGreaterThan(memory.tokens);
    expect(Number(await page.locator('.seg.head').getAttribute('data-tokens'))).toBe(parts.instructions.tokens + parts.memory.tokens);
    expect(await page.locator('[role=alert]').count()).toBe(0);
    await expectAccessible(page, 'entity with its memory views');
    await shots(page, dir, '01-timeline');
  });

  it("explains a turn stored before windows were recorded with the server's reason, as no error", async () => {
    const seq = rotations[0].seq!;
    // As a database from before issue 33 has it: no record of that turn's window.
    const sqlite = new Database(db);
    expect(sqlite.prepare('DELETE FROM turn_windows WHERE seq = ?').run(seq).changes).toBe(1);
    sqlite.close();
    await page.goto(`${server.url}/#/about`);
    await page.goto(`${server.url}/#/entities/${id}`);
    await page.getByRole('button', { name: `Show the window at turn ${seq}` }).click();
    await page.getByText(`The window at turn ${seq} cannot be shown:`).waitFor();
    expect(await page.locator('.rotations [role=status]').textContent()).toMatch(/cannot be rebuilt: that turn was stored before mgpt recorded each turn's window/);
    expect(await page.locator('[role=alert]').count()).toBe(0);
    // The other turn's window is still there.
    const other = rotations[1].seq!;
    await page.getByRole('button', { name: `Show the window at turn ${other}` }).click();
    await page.getByRole('heading', { name: `The window at turn ${other}` }).waitFor();
    await shots(page, dir, '02-window-not-recorded');
  });
});
