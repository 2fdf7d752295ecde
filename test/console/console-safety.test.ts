import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/engine/platform/keys.js';
import { findChromium, launch, outputDir, shots, signIn } from '../helpers/browser.js';
import { servedFake } from '../helpers/served.js';

// Text from a model, a user or a log is shown as text; the page asks nothing of another origin;
// without a key there is only the sign-in page. Skips with a banner without Chromium (fails under CI).
const chromiumPath = findChromium('the console safety tests');
const s = servedFake({ narrator: true });
const dir = outputDir('console-safety');

const IMG = '<img src=x onerror="alert(1)">';
const LINK = '<a href="javascript:alert(2)">click</a> javascript:alert(3)';
/** 100 KB on one line (words: a single 100 KB word would make the tokenizer, not the page, the subject). */
const LONG = Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(' ').slice(0, 100 * 1024);

describe('the console over HTTP', () => {
  it('is served with a strict policy: own scripts only, connect-src self, no framing, no sniffing', async () => {
    const res = await fetch(s.server.url + '/');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    for (const d of ["script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "default-src 'none'"]) expect(csp).toContain(d);
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)|\son\w+=|style=/);
    for (const asset of ['/console/app.js', '/console/app.css']) {
      const a = await fetch(s.server.url + asset);
      expect(a.status, asset).toBe(200);
      expect(a.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // The bundle has no network address but its own server's paths (no CDN, no fetch elsewhere), and
    // no way to turn text into markup.
    const bundle = await (await fetch(s.server.url + '/console/app.js')).text();
    // Two strings of the Markdown parser are not addresses the page asks: the scheme it puts before a
    // bare www. autolink's text, and the issue tracker its internal errors name.
    const markedStrings = ['"http://"+', 'https://github.com/markedjs/marked.'];
    expect(markedStrings.every((m) => bundle.includes(m)), 'the parser is bundled').toBe(true);
    expect(markedStrings.reduce((b, m) => b.split(m).join(''), bundle)).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(bundle).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
  });

  it('answers 401 to every API call the console makes when no key is given', async () => {
    for (const path of ['/v1/entities', '/v1/whoami', '/v1/search?q=x', '/api/mgpt/universes', '/api/mgpt/logs?ownerUserId=x', '/v1/keys', '/v1/accounts']) {
      expect((await fetch(s.server.url + path)).status, path).toBe(401);
    }
  });

  it('has no handover without mgpt console: a code is refused', async () => {
    const res = await fetch(s.server.url + '/console/handoff', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"code":"guess"}' });
    expect(res.status).toBe(401);
  });
});

describe.skipIf(!chromiumPath)('the console in Chromium, given hostile text', () => {
  let browser: Browser;
  let page: Page;
  let key: string;
  const offsite: string[] = [];
  const dialogs: string[] = [];
  const api = async <T>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(s.server.url + path, { method: body ? 'POST' : 'GET', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as T;
  };
  /** Nothing the hostile text could have made: no image, no javascript: link, no dialog. */
  const expectInert = async () => {
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"], [onerror], [onclick]').count()).toBe(0);
    expect(dialogs).toEqual([]);
  };

  beforeAll(async () => {
    key = (await s.engine.keys.create('local', [...SCOPES])).key!;
    browser = await launch(chromiumPath!);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(s.server.url).origin;
    page.on('request', (r) => {
      if (!r.url().startsWith(origin + '/') && !r.url().startsWith('data:')) offsite.push(r.url());
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('without a key shows the sign-in page and nothing else', async () => {
    for (const route of ['/', '/#/entities', '/#/logs', '/#/keys']) {
      await page.goto(s.server.url + route);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.locator('nav, table, .chat').count(), route).toBe(0);
    }
    await page.getByLabel('API key').fill('mgpt_live_0000000000000000.wrongwrongwrongwrongwrongwrongwrongwrongwro');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/refused|Sign-in failed/);
    expect(await page.evaluate(() => sessionStorage.getItem('mgpt.console.key'))).toBeNull();
    await shots(page, dir, '01-refused');
  });

  it("renders an entity's name and a reply as text", async () => {
    const e = await api<{ id: string }>('/v1/entities', { model: 'mgpt-1-27b', name: IMG });
    s.fake.script({ text: `${IMG} ${LINK}` }, { text: LONG });
    await page.goto(s.server.url + '/');
    await signIn(page, key);
    expect(await page.locator('table a').first().textContent()).toBe(IMG);
    await page.locator('table a').first().click();
    await page.getByRole('heading', { level: 1, name: IMG }).waitFor();
    for (const text of ['first', 'second']) {
      await page.getByRole('textbox', { name: 'Message' }).fill(text);
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
      await page.waitForFunction(() => (document.querySelector('.turn-status')?.textContent ?? '').startsWith('Done'));
    }
    expect(await page.locator('li.msg.assistant .text').first().textContent()).toBe(`${IMG} ${LINK}`);
    expect(await page.locator('li.msg.assistant .text').last().textContent()).toBe(LONG);
    await expectInert();
    // Read back from the server (a fresh page), then opened as a window block.
    await page.reload();
    await page.locator('#msg-4').waitFor();
    expect(await page.locator('#msg-2 .text').textContent()).toBe(`${IMG} ${LINK}`);
    await page.locator('button.block', { hasText: '#2 assistant' }).click();
    expect(await page.locator('.block-detail pre').textContent()).toBe(`${IMG} ${LINK}`);
    await expectInert();
    await shots(page, dir, `02-entity-${e.id.slice(0, 4)}`);
  });

  it('keeps an id from the address inside its own path segment', async () => {
    const paths: string[] = [];
    const seen = (r: { url(): string }) => paths.push(new URL(r.url()).pathname);
    page.on('request', seen);
    await page.goto(`${s.server.url}/#/entities/..%2Fkeys`);
    // No such entity: the page says so (the server's 404), having asked for nothing else.
    await page.getByRole('alert').waitFor();
    page.off('request', seen);
    expect(paths).toContain('/v1/entities/..%2Fkeys');
    expect(paths).not.toContain('/v1/keys');
  });

  it('renders log fields and universe text as text', async () => {
    const u = await api<{ universe: string }>('/api/mgpt/universes', { storedPrompt: 'narrator', displayName: IMG });
    s.fake.script({ text: `${IMG} ${LINK}` });
    await api('/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: u.universe, userInput: LINK, requestId: IMG });
    await page.goto(s.server.url + '/#/logs');
    await page.locator('table.logs tbody tr').first().waitFor();
    expect(await page.locator('table.logs tbody tr td.mono').first().textContent()).toBe(IMG);
    await page.locator('table.logs tbody tr a').first().click();
    await page.locator('dl.record').waitFor();
    expect(await page.locator('dl.record').textContent()).toContain(IMG);
    await expectInert();
    await page.goto(`${s.server.url}/#/universes/${u.universe}`);
    await page.getByRole('heading', { level: 1, name: IMG }).waitFor();
    expect(await page.locator('li.msg.assistant .text').textContent()).toBe(`${IMG} ${LINK}`);
    await page.goto(`${s.server.url}/#/search?q=alert&source=universes`);
    await page.locator('ol.hits li').first().waitFor();
    expect(await page.locator('ol.hits .snippet').first().textContent()).toContain('alert');
    await expectInert();
    await shots(page, dir, '03-search');
    // A universe hit lands on its message.
    const hit = (await page.locator('ol.hits a').first().textContent())!;
    const seq = Number(/#(\d+)/.exec(hit)![1]);
    await page.locator('ol.hits a').first().click();
    await page.locator('li.msg.landed').waitFor();
    expect(await page.locator('li.msg.landed').getAttribute('id')).toBe(`msg-${seq}`);
    expect(await page.locator('li.msg.landed').textContent()).toContain('alert');
    await expectInert();
    expect(offsite).toEqual([]);
  });
});
