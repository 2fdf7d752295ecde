import { forgetWhoami, session, whenSignedOut, whoami } from './api.js';
import { field, fill, h, notice } from './dom.js';
import { entitiesPage, entityPage } from './entities.js';
import { keysPage } from './keys.js';
import { logsPage } from './logs.js';
import { searchPage } from './search.js';
import { universePage, universesPage } from './universes.js';

/** A page: its root element, filled by the page itself; `params` come from the route's `?a=b`. */
export type Page = (root: HTMLElement, params: URLSearchParams, id?: string) => Promise<void> | void;

const ROUTES: Array<[RegExp, Page, string]> = [
  [/^\/entities\/([^/?]+)$/, entityPage, 'Entity'],
  [/^\/entities$/, entitiesPage, 'Entities'],
  [/^\/universes\/([^/?]+)$/, universePage, 'Universe'],
  [/^\/universes$/, universesPage, 'Universes'],
  [/^\/logs$/, logsPage, 'Logs and usage'],
  [/^\/search$/, searchPage, 'Search'],
  [/^\/keys$/, keysPage, 'Keys and limits'],
];

const NAV: Array<[string, string]> = [
  ['#/entities', 'Entities'],
  ['#/universes', 'Universes'],
  ['#/logs', 'Logs and usage'],
  ['#/search', 'Search'],
  ['#/keys', 'Keys and limits'],
];

const app = document.getElementById('app')!;

function signIn(message?: string): void {
  document.title = 'Sign in · mgpt console';
  const key = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'mgpt_live_…' });
  const status = h('div', { 'aria-live': 'polite' }, message ? notice(message, 'error') : null);
  const form = h(
    'form',
    {
      class: 'signin',
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        session.set(key.value.trim());
        forgetWhoami();
        try {
          await whoami();
          if (!location.hash.startsWith('#/') || location.hash === '#/signin') location.hash = '#/entities';
          route();
        } catch (err) {
          session.clear();
          fill(status, notice(`Sign-in failed: ${(err as Error).message}`, 'error'));
        }
      },
    },
    field('API key', key),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  fill(
    app,
    h('main', { id: 'main', class: 'signin-page' }, h('h1', {}, 'mgpt console'), h('p', {}, 'Sign in with an API key. It is kept in this tab only (sessionStorage) and sent only to this server.'), form, status),
  );
  key.focus();
}

function shell(active: string, title: string): HTMLElement {
  const main = h('main', { id: 'main', tabindex: '-1' });
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h('ul', {}, NAV.map(([href, label]) => h('li', {}, h('a', { href, 'aria-current': href.slice(1) === active ? 'page' : null }, label)))),
  );
  const out = h('button', { type: 'button', class: 'link', onclick: () => signOut() }, 'Sign out');
  fill(app, h('a', { href: '#/skip', class: 'skip', onclick: (ev: Event) => (ev.preventDefault(), main.focus()) }, 'Skip to content'), h('header', {}, h('span', { class: 'brand' }, 'mgpt console'), nav, out), main);
  document.title = `${title} · mgpt console`;
  return main;
}

function signOut(): void {
  session.clear();
  forgetWhoami();
  location.hash = '#/signin';
  signIn();
}

async function route(): Promise<void> {
  if (!session.key()) return signIn();
  const [path, query] = (location.hash.slice(1) || '/entities').split('?');
  const hit = ROUTES.map(([re, page, title]) => [re.exec(path), page, title] as const).find(([m]) => m);
  if (!hit) {
    location.hash = '#/entities';
    return;
  }
  const [m, page, title] = hit;
  const main = shell('/' + path.split('/')[1], title);
  try {
    await page(main, new URLSearchParams(query ?? ''), m![1] ? decodeURIComponent(m![1]) : undefined);
  } catch (err) {
    if (session.key()) main.append(notice(`Failed: ${(err as Error).message}`, 'error'));
  }
}

/** `mgpt console` opens `/#code=…`: the one-time code is exchanged for the key, then taken out of the address. */
async function handoff(): Promise<void> {
  const code = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash)?.[1];
  if (!code) return;
  history.replaceState(null, '', location.pathname + '#/entities');
  try {
    const res = await fetch('/console/handoff', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
    const body = (await res.json()) as { key?: string };
    if (res.ok && body.key) session.set(body.key);
  } catch {
    // The sign-in page then asks for a key.
  }
}

whenSignedOut(() => signIn('The key was refused (401): sign in again.'));
window.addEventListener('hashchange', () => void route());
void handoff().then(route);
