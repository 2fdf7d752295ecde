import { copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/core/text/numbers.js';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { expectAccessible, findChromium, launch, outputDir, shots, signIn } from '../helpers/browser.js';
import { servedFake } from '../helpers/served.js';

// The console in a real Chromium against a real server on loopback (the scripted fake behind it).
// Without Chromium this says so in a banner and skips; under CI (MGPT_TEST_REQUIRE_CHROMIUM) it fails.
const chromiumPath = findChromium('the console browser tests');
const s = servedFake({ narrator: true });
const dir = outputDir('console-flow');

interface WindowBlock {
  kind: string;
  covers: [number, number];
  tokens: number;
}

interface Rotation {
  id: string;
  trigger: string;
  seq: number | null;
  from_seq: number;
  to_seq: number;
  summary: { tokens: number };
  undone: boolean;
}

describe.skipIf(!chromiumPath)('the console in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  let entityId: string;
  const requests: string[] = [];
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  const api = async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
    const res = await fetch(s.server.url + path, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as T;
  };
  /** Sends one message from the chat box and waits until its reply streamed and the memory panel was redrawn. */
  const chat = async (text: string) => {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await page.waitForFunction(() => {
      const status = document.querySelector('.turn-status')?.textContent ?? '';
      const send = document.querySelector<HTMLButtonElement>('.composer button[type=submit]');
      return status.startsWith('Done') && send && !send.disabled;
    });
  };

  beforeAll(async () => {
    key = (await s.engine.keys.create('local', [...SCOPES])).key!;
    browser = await launch(chromiumPath!);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('signs in with a key, which stays out of every URL', async () => {
    await page.goto(s.server.url + '/');
    await page.getByRole('heading', { name: 'mgpt console' }).waitFor();
    expect(await page.locator('nav').count()).toBe(0);
    await expectAccessible(page, 'sign-in');
    await shots(page, dir, '01-sign-in');
    await signIn(page, key);
    expect(await page.evaluate(() => sessionStorage.getItem('mgpt.console.key'))).toBe(key);
    await expectAccessible(page, 'entities');
    await shots(page, dir, '02-entities');
  });

  it('creates an entity and chats 30 turns until its window rotates', async () => {
    await page.getByLabel('Name').fill('Ada');
    await page.getByLabel('Instructions').fill('You are Ada, a patient tutor.');
    await page.getByRole('button', { name: 'Create entity' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ada' }).waitFor();
    entityId = decodeURIComponent(/#\/entities\/([^?]+)/.exec(page.url())![1]);
    // A small budget so 30 turns rotate, and automatic recall (issue 32) so the last turn recalls.
    await api(`/v1/entities/${entityId}`, { method: 'PATCH', body: { budget_tokens: 300, recall: 'auto' } });
    await page.reload();
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await chat('My code word is zanzibar42, remember it.');
    for (let i = 2; i <= 30; i++) await chat(`Turn ${i}: tell me something about the number ${i * 7}.`);
    const win = await api<{ tokens: number; blocks: WindowBlock[] }>(`/v1/entities/${entityId}/window`);
    expect(win.blocks.some((b) => b.kind === 'summary')).toBe(true);
    expect(await page.locator('ol.messages li.msg').count()).toBe(60);
    expect(await page.locator('#msg-60 .text').textContent()).toBe('reply: Turn 30: tell me something about the number 210.');
    await expectAccessible(page, 'entity');
    await shots(page, dir, '03-entity-rotated');
  }, 180_000);

  it("draws every part of the next request, as GET /window?prompt=true counts them, adding up to its tokens", async () => {
    const win = await api<{ tokens: number; blocks: WindowBlock[]; prompt_tokens: number; parts: Record<string, { tokens: number }> }>(`/v1/entities/${entityId}/window?prompt=true`);
    const parts = await page.locator('.bar .seg').evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-part'), Number(e.getAttribute('data-tokens'))])));
    expect(parts.summaries + parts.live).toBe(win.tokens);
    expect(parts.summaries).toBe(win.blocks.filter((b) => b.kind === 'summary').reduce((n, b) => n + b.tokens, 0));
    // The instructions counted by the engine (not estimated from their length), with the pinned memory.
    expect(parts.head).toBe(win.parts.instructions.tokens + win.parts.memory.tokens);
    expect(parts.head).toBeGreaterThan(0);
    expect(parts.recalled).toBe(win.parts.recalled.tokens);
    expect(parts.head + parts.summaries + parts.live + parts.recalled).toBe(win.prompt_tokens);
    expect(await page.locator('[data-prompt-tokens]').getAttribute('data-prompt-tokens')).toBe(String(win.prompt_tokens));
    expect(await page.locator('figcaption').first().textContent()).toMatch(/^next request [\d,]+ tokens before the new message; window/);
    expect(await page.locator('[data-window-tokens]').first().getAttribute('data-window-tokens')).toBe(String(win.tokens));
    expect(await page.locator('button.block').count()).toBe(win.blocks.length);
  });

  it('lists the rotations with the seqs each folded, and shows the window at a turn as GET /window?at has it', async () => {
    const { rotations } = await api<{ rotations: Rotation[] }>(`/v1/entities/${entityId}/rotations`);
    expect(rotations.length).toBeGreaterThan(0);
    expect(rotations.every((r) => r.trigger === 'turn' && r.seq !== null && !r.undone)).toBe(true);
    // Newest first, each with its span; the spans tile the folded transcript from seq 1.
    const items = await page.locator('ol.timeline li.rotation .span').allTextContents();
    const newestFirst = [...rotations].reverse();
    expect(items).toEqual(newestFirst.map((r) => ` turn at #${r.seq}: folded ${r.from_seq}–${r.to_seq} into ${r.summary.tokens} tokens`));
    expect(rotations[0].from_seq).toBe(1);
    rotations.slice(1).forEach((r, i) => expect(r.from_seq).toBe(rotations[i].to_seq + 1));
    expect(await page.locator('.rotations .unavailable').count()).toBe(0);
    const oldest = rotations[0];
    await page.getByRole('button', { name: `Show the window at turn ${oldest.seq}` }).click();
    await page.getByRole('heading', { name: `The window at turn ${oldest.seq}` }).waitFor();
    const at = await api<{ seq: number; tokens: number; blocks: WindowBlock[]; prompt: Array<{ role: string; content: string }> }>(`/v1/entities/${entityId}/window?at=${oldest.seq}`);
    expect(at.seq).toBe(oldest.seq);
    const label = (b: WindowBlock) => (b.kind === 'summary' ? `summary of ${b.covers[0]}–${b.covers[1]}` : `#${b.covers[0]} ${(b as WindowBlock & { role: string }).role}`) + ` · ${b.tokens} tok`;
    expect(await page.locator('.block-detail button.block').allTextContents()).toEqual(at.blocks.map(label));
    expect(await page.locator('.block-detail [data-window-tokens]').getAttribute('data-window-tokens')).toBe(String(at.tokens));
    // The rotation's turn saw the summary it wrote, covering 1..to_seq.
    expect(at.blocks[0]).toMatchObject({ kind: 'summary', covers: [1, oldest.to_seq] });
    await page.locator('.block-detail details.prompt summary').click();
    expect(await page.locator('.block-detail details.prompt pre').allTextContents()).toEqual(at.prompt.map((m) => m.content));
    expect(at.prompt.at(-1)!.content).toBe(`Turn ${(oldest.seq! + 1) / 2}: tell me something about the number ${((oldest.seq! + 1) / 2) * 7}.`);
    await expectAccessible(page, 'entity with the window at a turn');
    await shots(page, dir, '03b-window-at-turn');
  });

  it('opens a summary by keyboard and shows the seqs it covers', async () => {
    const win = await api<{ blocks: Array<WindowBlock & { content: string }> }>(`/v1/entities/${entityId}/window`);
    const summary = win.blocks.find((b) => b.kind === 'summary')!;
    // By keyboard: Tab from the top of the page to the summary's button, then Enter.
    await page.locator('a.skip').focus();
    for (let i = 0; i < 200 && !(await page.evaluate(() => document.activeElement?.matches('button.block.summary'))); i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.matches('button.block.summary'))).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.block-detail .covers').textContent()).toContain(`Covers seqs ${summary.covers[0]}–${summary.covers[1]}`);
    expect(await page.locator('.block-detail pre').textContent()).toBe(summary.content);
    await shots(page, dir, '04-summary-open');
  });

  it('counts pinned memory in the head of the bar and lists its blocks', async () => {
    const before = Number(await page.locator('.seg.head').getAttribute('data-tokens'));
    expect(await page.locator('.memory').textContent()).toContain('No pinned memory (up to 16 blocks, 2,000 tokens).');
    const block = await api<{ label: string; tokens: number }>(`/v1/entities/${entityId}/memory/student`, { method: 'PUT', body: { text: 'The student is called Grace and is learning arithmetic.' } });
    expect(block.tokens).toBeGreaterThan(0);
    await page.reload();
    await page.locator('dl.pinned').waitFor();
    // The head grows by the memory message as the request carries it: the heading and label with the block's text.
    const counted = await api<{ parts: { memory: { tokens: number } } }>(`/v1/entities/${entityId}/window?prompt=true`);
    expect(counted.parts.memory.tokens).toBeGreaterThan(block.tokens);
    expect(Number(await page.locator('.seg.head').getAttribute('data-tokens'))).toBe(before + counted.parts.memory.tokens);
    expect(await page.locator('dl.pinned dt').allTextContents()).toEqual([`student · ${block.tokens} tok`]);
    expect(await page.locator('dl.pinned dd').allTextContents()).toEqual(['The student is called Grace and is learning arithmetic.']);
    expect(await page.locator('.legend').textContent()).toContain(`pinned memory ${counted.parts.memory.tokens}`);
    await expectAccessible(page, 'entity with pinned memory');
    await shots(page, dir, '04b-pinned-memory');
  });

  it("shows the seqs the last turn recalled", async () => {
    await chat('What was zanzibar42 again?');
    const seqs = await page.locator('.recalled a[data-seq]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-seq'))));
    expect(seqs).toContain(1);
    const win = await api<{ blocks: WindowBlock[] }>(`/v1/entities/${entityId}/window`);
    const firstLive = win.blocks.find((b) => b.kind === 'message')!.covers[0];
    for (const seq of seqs) expect(seq).toBeLessThan(firstLive);
    // Each recalled line with its text, as the turn's prompt carried it.
    const lines = await page.locator('ol.recalled-lines li').allTextContents();
    expect(lines.length).toBe(seqs.length);
    expect(lines.find((l) => l.startsWith('#1 user: '))).toContain('My code word is zanzibar42');
    await shots(page, dir, '05-recalled');
    await page.setViewportSize({ width: 1280, height: 800 });
    const docShot = await page.screenshot({ path: `${dir}/entity-page.png` });
    expect(docShot.length).toBeGreaterThan(1000);
    // The README's picture: refreshed on demand (MGPT_UPDATE_DOCS_SCREENSHOT=1), not on every run.
    if (process.env.MGPT_UPDATE_DOCS_SCREENSHOT) copyFileSync(`${dir}/entity-page.png`, fileURLToPath(new URL('../../docs/console.png', import.meta.url)));
  });

  it('runs a universe turn with a tool call, then draws a scene image', async () => {
    await page.goto(s.server.url + '/#/universes');
    await page.getByRole('heading', { level: 1, name: 'Universes' }).waitFor();
    await expectAccessible(page, 'universes');
    await page.getByLabel('Stored prompt').fill('narrator');
    await page.getByLabel('Display name').fill('Castle');
    await page.getByRole('button', { name: 'Create universe' }).click();
    await page.getByRole('heading', { level: 1, name: 'Castle' }).waitFor();
    s.fake.script({ toolCalls: [{ id: 'call_1', name: 'roll', arguments: '{"sides":6}' }] }, { text: 'You rolled a four; the gate opens.' });
    await page.getByLabel('User input').fill('I roll to open the gate.');
    await page.getByLabel('Tools (JSON, optional)').fill('[{"type":"function","name":"roll","parameters":{"type":"object","properties":{"sides":{"type":"number"}}}}]');
    await page.getByRole('button', { name: 'Generate' }).click();
    await page.getByRole('heading', { name: 'Answer the tool calls' }).waitFor();
    expect(await page.locator('.tool-call strong').first().textContent()).toBe('roll');
    await page.getByLabel('Output of roll (call_1), JSON').fill('{"value":4}');
    await page.getByRole('button', { name: 'Send the results' }).click();
    await page.getByRole('heading', { name: 'Next turn' }).waitFor();
    await page.locator('li.msg.tool').waitFor();
    expect(await page.locator('li.msg.tool').textContent()).toContain('"value":4');
    expect(await page.locator('li.msg.assistant').last().textContent()).toContain('You rolled a four; the gate opens.');
    await page.locator('dl.record').waitFor();
    expect(await page.locator('dl.record').textContent()).toContain('game-1-lite-frozen');
    await page.getByLabel('Description').fill('the gate of the castle at dusk');
    await page.getByRole('button', { name: 'Draw' }).click();
    await page.locator('li.scene img').waitFor();
    expect(await page.locator('li.scene img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    await expectAccessible(page, 'universe');
    await shots(page, dir, '06-universe');
  });

  it('lists logs with tokens and cost per day, and keys for an admin key', async () => {
    await page.goto(s.server.url + '/#/logs');
    await page.locator('table.logs tbody tr').first().waitFor();
    expect(await page.locator('table.logs tbody tr').count()).toBeGreaterThanOrEqual(2);
    await page.locator('svg.chart rect').first().waitFor();
    // The chart is the billing ledger's sums (GET /v1/usage), in the CLI's money format; it used to
    // add up the log records, which missed every entity turn that wrote none.
    expect(requests.some((u) => new URL(u).pathname === '/v1/usage')).toBe(true);
    const usage = await api<{ data: Array<{ key: string; charges: number; input_tokens: number; output_tokens: number; cost_usd: number }>; charges: number; input_tokens: number; output_tokens: number; cost_usd: number }>('/v1/usage?by=day');
    const cells = (u: { charges: number; input_tokens: number; output_tokens: number; cost_usd: number }) => [u.charges, u.input_tokens, u.output_tokens].map((n) => n.toLocaleString('en-US')).concat(formatUsd(u.cost_usd));
    expect(usage.charges).toBeGreaterThan(30);
    expect(await page.locator('table.usage-table tfoot td').allTextContents()).toEqual(cells(usage));
    const day = usage.data[0]!;
    expect(await page.locator('table.usage-table tbody tr', { hasText: day.key }).locator('td.num').allTextContents()).toEqual(cells(day));
    await expectAccessible(page, 'logs');
    await shots(page, dir, '07-logs');
    await page.goto(s.server.url + '/#/keys');
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    expect(await page.locator('td', { hasText: 'this key' }).count()).toBe(1);
    await expectAccessible(page, 'keys');
    await shots(page, dir, '08-keys');
    // A new key's secret is shown once; then it is revoked from the same page.
    await page.getByRole('checkbox', { name: 'mgpt.logs:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByRole('textbox', { name: 'The new key' }).inputValue();
    expect(secret).toMatch(/^mgpt_live_/);
    const created = (await api<{ data: Array<{ id: string; scopes: string[]; revokedAt: string | null }> }>('/v1/keys')).data.at(-1)!;
    expect(created.scopes).toEqual(['mgpt.responses:create', 'mgpt.logs:read']);
    await page.locator('tr', { hasText: created.id }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(`${created.id} revoked.`).waitFor();
    expect((await fetch(s.server.url + '/v1/entities', { headers: { Authorization: `Bearer ${secret}` } })).status).toBe(401);
  });

  it('finds a message through search and lands on it', async () => {
    await page.goto(s.server.url + '/#/search');
    await page.getByLabel('Search for').fill('zanzibar42');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('ol.hits li').first().waitFor();
    expect(await page.locator('ol.hits mark').first().textContent()).toBe('zanzibar42');
    await expectAccessible(page, 'search');
    await shots(page, dir, '09-search');
    await page.locator('ol.hits a', { hasText: '#1 user' }).click();
    await page.locator('li.msg.landed').waitFor();
    expect(page.url()).toContain(`#/entities/${entityId}?seq=1`);
    expect(await page.locator('li.msg.landed').getAttribute('id')).toBe('msg-1');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('msg-1');
    await shots(page, dir, '10-search-landed');
    // Landing further on shows the messages around it, and the earlier ones on request.
    await page.goto(`${s.server.url}/#/entities/${entityId}?seq=40`);
    await page.locator('#msg-40.landed').waitFor();
    expect(await page.locator('#msg-1').count()).toBe(0);
    await page.getByRole('button', { name: 'Earlier messages' }).click();
    await page.locator('#msg-1').waitFor();
    expect(await page.locator('ol.messages li.msg').count()).toBe(62);
    expect(await page.getByRole('button', { name: 'Earlier messages' }).count()).toBe(0);
  });

  it('asked nothing of another origin, opened no dialog, and never put the key in a URL', () => {
    const origin = new URL(s.server.url).origin;
    expect(requests.length).toBeGreaterThan(50);
    expect(requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:'))).toEqual([]);
    expect(requests.filter((u) => u.includes(key) || u.includes(key.split('.')[1]))).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
