import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { expectAccessible, findChromium, launch, outputDir, shots, signIn } from '../helpers/browser.js';
import { servedFake } from '../helpers/served.js';

// The rotation timeline and pinned memory stand on routes of issue 33 (rotations, the window at a
// turn, memory). Here the browser answers them itself (page.route) with that shapes, and
// with 404 as a server without them answers, so this holds before and after those routes exist.
const chromiumPath = findChromium('the console memory-view tests');
const s = servedFake();
const dir = outputDir('console-memory');

const rotation = (n: number, over: Record<string, unknown> = {}) => ({
  id: `rot_${n}`,
  created_at: `2026-11-2${n}T10:00:00.000Z`,
  trigger: 'turn',
  seq: n * 4 + 1,
  from_seq: (n - 1) * 4 + 1,
  to_seq: n * 4,
  summary: { text: `summary number ${n}: <b>not bold</b>`, tokens: 20 + n },
  route: { provider: 'openai', model: 'fake-model' },
  usage: { prompt_tokens: 300, cached_tokens: 250, completion_tokens: 21 },
  blocks_before: [],
  blocks_after: [],
  undone: false,
  ...over,
});
const ROTATIONS = { rotations: [rotation(1), rotation(2, { trigger: 'manual', seq: null, undone: true })] };
const MEMORY = { memory: [{ label: 'name', text: 'The user is called Sam.', tokens: 7, updated_at: '2026-11-26T10:00:00.000Z' }], tokens: 7, limits: { blocks: 16, tokens: 2000 } };
const AT_5 = { entity_id: 'x', object: 'entity.window', budget_tokens: 32000, tokens: 30, blocks: [
  { id: 'b1', kind: 'summary', role: 'system', content: 'the summary then', tokens: 21, covers: [1, 4] },
  { id: 'b2', kind: 'message', role: 'user', content: 'message five', tokens: 9, covers: [5, 5] },
] };

describe.skipIf(!chromiumPath)('the memory views in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  let id: string;
  const answer = (path: RegExp, status: number, body: unknown) =>
    page.route(path, (route) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) }));

  beforeAll(async () => {
    key = (await s.engine.keys.create('local', [...SCOPES])).key!;
    const e = await s.engine.entities.create({ model: 'mgpt-1-27b', name: 'Sam', instructions: 'Be brief.' }, (await s.engine.accounts.find('local')).id);
    id = e.id;
    for (const content of ['one', 'two']) {
      const res = await fetch(`${s.server.url}/v1/entities/${id}/messages`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ content, stream: false }) });
      expect(res.status).toBe(200);
    }
    browser = await launch(chromiumPath!);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(s.server.url + '/');
    await signIn(page, key);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('says "not available on this server" where the routes answer 404, as no error', async () => {
    await answer(/\/rotations$/, 404, { error: 'no route' });
    await answer(/\/memory$/, 404, { error: 'no route' });
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.locator('.rotations .unavailable').waitFor();
    expect(await page.locator('.rotations').textContent()).toContain('Rotation history is not available on this server.');
    expect(await page.locator('.memory .unavailable').first().textContent()).toBe('Pinned memory is not available on this server.');
    expect(await page.locator('[role=alert]').count()).toBe(0);
    await page.unrouteAll();
  });

  it('draws the rotation history and pinned memory, and shows the window at a turn', async () => {
    await answer(/\/rotations$/, 200, ROTATIONS);
    await answer(/\/memory$/, 200, MEMORY);
    await answer(/\/window\?at=5$/, 200, AT_5);
    await page.goto(`${s.server.url}/#/about`);
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.locator('ol.timeline li').first().waitFor();
    const items = await page.locator('ol.timeline li.rotation').allTextContents();
    expect(items).toHaveLength(2);
    expect(items[0]).toContain('manual (undone): folded 5–8 into 22 tokens');
    expect(items[1]).toContain('turn: folded 1–4 into 21 tokens');
    expect(items[1]).toContain('300 prompt (250 cached) + 21');
    expect(await page.locator('ol.timeline li.undone').count()).toBe(1);
    // The undone manual rotation has no turn, so no window to show; the other has.
    expect(await page.getByRole('button', { name: /Show the window at turn/ }).count()).toBe(1);
    expect(await page.locator('dl.pinned').textContent()).toContain('The user is called Sam.');
    const head = Number(await page.locator('.seg.head').getAttribute('data-tokens'));
    expect(head).toBe(Math.ceil('Be brief.'.length / 4) + 7);
    await page.getByRole('button', { name: 'Show the window at turn 5' }).click();
    await page.getByRole('heading', { name: 'The window at turn 5' }).waitFor();
    expect(await page.locator('.block-detail button.block').allTextContents()).toEqual(['summary of 1–4 · 21 tok', '#5 user · 9 tok']);
    await page.locator('.block-detail button.block.summary').click();
    expect(await page.locator('.block-detail .covers').textContent()).toContain('Covers seqs 1–4');
    await page.locator('ol.timeline details summary').last().click();
    expect(await page.locator('ol.timeline pre').last().textContent()).toBe('summary number 1: <b>not bold</b>');
    expect(await page.locator('ol.timeline b').count()).toBe(0);
    await expectAccessible(page, 'entity with its memory views');
    await shots(page, dir, '01-timeline');
  });

  it('says so when the window at a turn is not available', async () => {
    await page.unrouteAll();
    await answer(/\/rotations$/, 200, ROTATIONS);
    await answer(/\/memory$/, 404, { error: 'no route' });
    await answer(/\/window\?at=5$/, 404, { error: 'no route' });
    await page.goto(`${s.server.url}/#/about`);
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.getByRole('button', { name: 'Show the window at turn 5' }).click();
    await page.getByText('The window at a past turn is not available on this server.').waitFor();
    expect(await page.locator('[role=alert]').count()).toBe(0);
    await page.unrouteAll();
  });
});
