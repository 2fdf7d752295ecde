import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { SIZES, expectAccessible, findChromium, launch, outputDir, shots, signIn } from '../helpers/browser.js';
import { servedFake } from '../helpers/served.js';

// Managing an entity from the console (settings, pinned memory, rotate, undo and delete behind a
// confirmation), what a click opens brought into view, long block lists collapsed, folded messages
// marked, Markdown drawn as elements, dark mode, tables that wrap between words, a taken name
// refused, and rotations numbered and spanned as `mgpt rotations` has them. Real Chromium against
// a real server on loopback (the scripted fake model behind it).
const chromiumPath = findChromium('the console management tests');
const s = servedFake();
const dir = outputDir('console-manage');

interface Rotation {
  seq: number | null;
  from_seq: number;
  to_seq: number;
  undone: boolean;
}
interface EntityJson {
  id: string;
  name: string;
  instructions: string;
  recall?: string;
  window: { budget_tokens: number };
}

/** Chromium at the first size, on the console, signed in with a key of every scope. */
async function signedInPage(): Promise<{ key: string; browser: Browser; page: Page }> {
  const key = (await s.engine.keys.create('local', [...SCOPES])).key!;
  const browser = await launch(chromiumPath!);
  const page = await browser.newPage({ viewport: SIZES[0] });
  await page.goto(s.server.url + '/');
  await signIn(page, key);
  return { key, browser, page };
}

describe.skipIf(!chromiumPath)('managing an entity in the console', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  const call = async (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(s.server.url + path, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const api = async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
    const res = await call(path, init);
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as T;
  };
  const make = async (name: string, budget: number, turns: number): Promise<string> => {
    const id = (await api<{ id: string }>('/v1/entities', { method: 'POST', body: { model: 'mgpt-1-27b', name, instructions: 'Be brief.' } })).id;
    await api(`/v1/entities/${id}`, { method: 'PATCH', body: { budget_tokens: budget } });
    for (let i = 1; i <= turns; i++) await api(`/v1/entities/${id}/messages`, { method: 'POST', body: { content: `message ${i} about the hold of the ship`, stream: false } });
    return id;
  };
  const rotations = async (id: string) => (await api<{ rotations: Rotation[] }>(`/v1/entities/${id}/rotations`)).rotations;
  const open = async (id: string) => {
    await page.goto(`${s.server.url}/#/about`);
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.locator('.manage h2').waitFor();
    await page.locator('.rotations h3').waitFor();
  };
  /** Whether the element is (at least partly) inside the viewport. */
  const inView = (selector: string) =>
    page.locator(selector).first().evaluate((el) => {
      const r = el.getBoundingClientRect();
      return r.bottom > 0 && r.top < window.innerHeight && r.height > 0;
    });

  beforeAll(async () => {
    ({ key, browser, page } = await signedInPage());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('edits instructions, budget and recall through PATCH, sending only what changed, and shows the fixed model', async () => {
    const id = await make('Editor', 4000, 1);
    await open(id);
    expect(await page.locator('.manage').textContent()).toContain("Model mgpt-1-27b: fixed for the entity's whole life.");
    const patches: string[] = [];
    page.on('request', (r) => r.method() === 'PATCH' && patches.push(r.postData() ?? ''));
    await page.getByLabel('Instructions', { exact: true }).fill('Answer in French.');
    await page.getByLabel('Window budget (tokens)').fill('2500');
    await page.getByLabel('Recall', { exact: true }).selectOption('off');
    await page.getByLabel('Memory tool (every turn offers the model remember)').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved: instructions, budget_tokens, recall, memory_tool.').waitFor();
    expect(patches.map((p) => JSON.parse(p))).toEqual([{ instructions: 'Answer in French.', budget_tokens: 2500, recall: 'off', memory_tool: true }]);
    const e = await api<EntityJson & { memory_tool?: boolean }>(`/v1/entities/${id}`);
    expect([e.instructions, e.window.budget_tokens, e.recall, e.memory_tool]).toEqual(['Answer in French.', 2500, undefined, true]);
    // The redrawn form shows the stored setting.
    expect(await page.getByLabel('Memory tool (every turn offers the model remember)').isChecked()).toBe(true);
    // The page redrew from the server: the head's instructions and the bar's budget.
    await page.locator('.window figcaption', { hasText: 'budget 2,500' }).waitFor();
    expect(await page.locator('.memory details pre').textContent()).toBe('Answer in French.');
    // A budget the engine refuses is said, and nothing changes.
    await page.getByLabel('Window budget (tokens)').fill('3');
    await page.getByLabel('Window budget (tokens)').evaluate((el: HTMLInputElement) => el.removeAttribute('min'));
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not changed:' }).waitFor();
    expect((await api<EntityJson>(`/v1/entities/${id}`)).window.budget_tokens).toBe(2500);
    await expectAccessible(page, 'the manage panel');
    await shots(page, dir, '01-settings');
  });

  it('sets and removes pinned memory blocks through PUT and DELETE', async () => {
    const id = await make('Pins', 4000, 1);
    await open(id);
    await page.getByLabel('Label').fill('name');
    await page.getByLabel('Text', { exact: true }).fill('The user is called Ada.');
    await page.getByRole('button', { name: 'Set pinned block' }).click();
    await page.getByText('Pinned block "name" set.').waitFor();
    await page.locator('dl.pinned', { hasText: 'The user is called Ada.' }).waitFor();
    const memory = async () => (await api<{ memory: Array<{ label: string; text: string }> }>(`/v1/entities/${id}/memory`)).memory;
    expect(await memory()).toMatchObject([{ label: 'name', text: 'The user is called Ada.' }]);
    await page.getByRole('button', { name: 'Remove pinned block name' }).click();
    await page.getByText('Removed pinned block "name".').waitFor();
    expect(await memory()).toEqual([]);
    await page.getByText('No pinned memory').waitFor();
  });

  it('rotates now, and undoes and deletes only after a confirmation in the page', async () => {
    const id = await make('Steer', 4000, 3);
    await open(id);
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByText('Rotated:').waitFor();
    expect((await rotations(id)).map((r) => r.undone)).toEqual([false]);
    await page.locator('ol.timeline li').first().waitFor();
    // Undo: asked first; Cancel leaves the rotation.
    await page.getByRole('button', { name: 'Undo last rotation…' }).click();
    expect(await page.locator('.confirm [role=alert]').textContent()).toMatch(/^Undo the last rotation\?/);
    await page.locator('.confirm').getByRole('button', { name: 'Cancel' }).click();
    expect(await page.locator('.confirm').textContent()).toBe('');
    expect((await rotations(id)).map((r) => r.undone)).toEqual([false]);
    await page.getByRole('button', { name: 'Undo last rotation…' }).click();
    await page.getByRole('button', { name: 'Yes, undo it' }).click();
    await page.getByText('Undone:').waitFor();
    expect((await rotations(id)).map((r) => r.undone)).toEqual([true]);
    // Delete: asked first, naming the entity; Cancel keeps it.
    await page.getByRole('button', { name: 'Delete entity…' }).click();
    expect(await page.locator('.confirm [role=alert]').textContent()).toBe('Delete "Steer" and its whole transcript? This cannot be undone.');
    await shots(page, dir, '02-confirm-delete');
    await page.locator('.confirm').getByRole('button', { name: 'Cancel' }).click();
    expect((await call(`/v1/entities/${id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete entity…' }).click();
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByRole('heading', { level: 1, name: 'Entities' }).waitFor();
    expect((await call(`/v1/entities/${id}`)).status).toBe(404);
  });

  it('refuses a taken name when creating, as the CLI does, and creates nothing', async () => {
    await make('Taken', 4000, 0);
    const before = (await api<{ data: unknown[] }>('/v1/entities')).data.length;
    await page.goto(`${s.server.url}/#/entities`);
    await page.getByLabel('Name').fill('Taken');
    await page.getByRole('button', { name: 'Create entity' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not created: an entity named "Taken" already exists' }).waitFor();
    expect((await api<{ data: unknown[] }>('/v1/entities')).data.length).toBe(before);
  });

  it('collapses a long block list, and brings what a click opens into view, at desktop and phone sizes', async () => {
    const id = await make('Long', 100_000, 12);
    const blocks = (await api<{ blocks: unknown[] }>(`/v1/entities/${id}/window`)).blocks.length;
    expect(blocks).toBe(24);
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await open(id);
      // 4 first, 4 last, and the rest behind one button.
      expect(await page.locator('.memory ol.blocks > li > button.block').count()).toBe(8);
      await page.getByRole('button', { name: `Show all ${blocks} blocks (16 more)` }).click();
      expect(await page.locator('.memory ol.blocks > li > button.block').count()).toBe(blocks);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.locator('button.block').last().click();
      await page.locator('.block-detail h3').waitFor();
      expect(await inView('.block-detail h3'), `${size.width}: the opened block`).toBe(true);
    }
    await page.setViewportSize(SIZES[0]);
    await shots(page, dir, '03-block-opened');
  });

  it('shows the window at a turn in view, numbers rotations oldest 1 like mgpt rotations, and names the span a turn folded', async () => {
    const id = await make('Folds', 300, 0);
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.locator('.manage h2').waitFor();
    // Turns from the page until the window has rotated twice: the second rotation folds an earlier summary in.
    for (let i = 1; (await rotations(id)).length < 2; i++) {
      expect(i, 'two rotations within 40 turns').toBeLessThan(40);
      await page.getByRole('textbox', { name: 'Message' }).fill(`message ${i} about the hold of the ship`);
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
      await page.waitForFunction(() => (document.querySelector('.turn-status')?.textContent ?? '').startsWith('Done') && !document.querySelector<HTMLButtonElement>('.composer button')!.disabled);
    }
    const list = await rotations(id);
    const last = list.at(-1)!;
    expect(last.from_seq).toBeGreaterThan(1);
    expect(await page.locator('.turn-status').textContent()).toContain(`the window rotated: messages ${last.from_seq}–${last.to_seq} were folded`);
    await page.locator('ol.timeline li.rotation').nth(1).waitFor();
    const items = await page.locator('ol.timeline li.rotation').allTextContents();
    // Newest first on the page, numbered as the CLI numbers them (the oldest is 1).
    expect(items.map((t) => /^Rotation (\d+) /.exec(t)?.[1])).toEqual(list.map((_, i) => String(list.length - i)));
    [...list].reverse().forEach((r, i) => expect(items[i]).toContain(`folded ${r.from_seq}–${r.to_seq}`));
    // Folded messages are marked: those before the window's first live message.
    const win = await api<{ blocks: Array<{ kind: string; covers: [number, number] }> }>(`/v1/entities/${id}/window`);
    const firstLive = win.blocks.find((b) => b.kind === 'message')!.covers[0];
    const seqs = (await page.locator('li.msg.folded').evaluateAll((els) => els.map((e) => Number(e.id.slice(4))))).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: firstLive - 1 }, (_, i) => i + 1));
    expect(await page.locator(`#msg-${firstLive - 1} .who`).textContent()).toContain('folded into a summary');
    expect(await page.locator(`#msg-${firstLive}`).getAttribute('class')).not.toContain('folded');
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.getByRole('button', { name: `Show the window at turn ${last.seq}` }).click();
      await page.getByRole('heading', { name: `The window at turn ${last.seq}` }).waitFor();
      expect(await inView('.block-detail h3'), `${size.width}: the window at turn ${last.seq}`).toBe(true);
    }
    await page.setViewportSize(SIZES[0]);
    await shots(page, dir, '04-window-at-turn');
  });
});

describe.skipIf(!chromiumPath)('the console draws Markdown as elements, in dark mode too, with tables that wrap between words', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  const MD = [
    '# Plan',
    '**bold** and `a<b>` and [bad](javascript:alert(4)) and [data](data:text/html,hi) and [good](https://example.org/x)',
    '<b>raw</b> <img src=x onerror="alert(5)">',
    '',
    '| Messages | Account | Tokens |',
    '|---|---|---|',
    '| one | two | three |',
    '',
    '- first',
    '- second',
  ].join('\n');

  beforeAll(async () => {
    ({ key, browser, page } = await signedInPage());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('renders a reply from its syntax tree: no javascript: or data: link, raw HTML as text, images not loaded', async () => {
    const dialogs: string[] = [];
    const offsite: string[] = [];
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.dismiss()));
    page.on('request', (r) => !r.url().startsWith(s.server.url) && offsite.push(r.url()));
    const res = await fetch(`${s.server.url}/v1/entities`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'mgpt-1-27b', name: 'Md' }) });
    const { id } = (await res.json()) as { id: string };
    s.fake.script({ text: MD });
    await page.goto(`${s.server.url}/#/entities/${id}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('plan it');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await page.waitForFunction(() => (document.querySelector('.turn-status')?.textContent ?? '').startsWith('Done'));
    for (const where of ['streamed', 'read back']) {
      const reply = page.locator('li.msg.assistant .text.md').last();
      expect(await reply.locator('h4').textContent(), where).toBe('Plan');
      expect(await reply.locator('strong').textContent(), where).toBe('bold');
      expect(await reply.locator('code').textContent(), where).toBe('a<b>');
      expect(await reply.locator('li').allTextContents(), where).toEqual(['first', 'second']);
      expect(await reply.locator('a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('rel')])), where).toEqual([['good', 'https://example.org/x', 'noopener noreferrer nofollow']]);
      expect(await reply.textContent(), where).toContain('bad and data and good');
      expect(await reply.textContent(), where).toContain('<b>raw</b> <img src=x onerror="alert(5)">');
      expect(await reply.locator('b, img, script, [onerror]').count(), where).toBe(0);
      expect(await reply.locator('table th').allTextContents(), where).toEqual(['Messages', 'Account', 'Tokens']);
      await page.reload();
      await page.locator('li.msg.assistant .text.md h4').waitFor();
    }
    expect(await page.locator('a[href^="javascript:"], a[href^="data:"]').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(offsite).toEqual([]);
  });

  it('wraps table cells between words at phone width: no word split across lines', async () => {
    await page.setViewportSize(SIZES[1]);
    const split = async () =>
      page.evaluate(() => {
        const out: string[] = [];
        // Ids (monospace) may break anywhere: they are one long word.
        for (const cell of document.querySelectorAll('th, td:not(.mono)')) {
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const text = n.textContent ?? '';
            for (const m of text.matchAll(/[A-Za-z]+/g)) {
              const range = document.createRange();
              range.setStart(n, m.index!);
              range.setEnd(n, m.index! + m[0].length);
              const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
              if (lines.size > 1) out.push(m[0]);
            }
          }
        }
        return out;
      });
    expect(await split(), 'the Markdown table').toEqual([]);
    await page.goto(`${s.server.url}/#/entities`);
    await page.locator('tbody tr').first().waitFor();
    expect(await split(), 'the entities table').toEqual([]);
    await page.goto(`${s.server.url}/#/keys`);
    await page.locator('tbody tr').first().waitFor();
    expect(await split(), 'the keys tables').toEqual([]);
    await shots(page, dir, '05-keys-phone');
    await page.setViewportSize(SIZES[0]);
  });

  it('follows prefers-color-scheme: dark colours when the system asks, and still no serious accessibility violation', async () => {
    const colours = () => page.evaluate(() => [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.documentElement).color]);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${s.server.url}/#/entities`);
    await page.locator('tbody tr').first().waitFor();
    expect(await colours()).toEqual(['rgb(255, 255, 255)', 'rgb(27, 31, 36)']);
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await colours()).toEqual(['rgb(13, 17, 23)', 'rgb(230, 237, 243)']);
    await page.locator('tbody a').first().click();
    await page.locator('.manage h2').waitFor();
    await expectAccessible(page, 'the entity page in dark mode');
    await shots(page, dir, '06-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
