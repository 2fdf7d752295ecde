import { api, whoami } from './api.js';
import type { KeyInfo } from '../core/backend.js';
import { field, fill, h, notice, scroller, usd } from './dom.js';

/** A key as GET /v1/keys lists it: the server's own type. */
type Key = KeyInfo;
interface Account {
  id: string;
  name: string;
  balanceUsd: number | null;
  rpm: number | null;
  tpm: number | null;
}

const SCOPES = ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read', 'mgpt.admin'];
const limit = (n: number | null, fallback: string) => (n === null ? fallback : String(n));
/** A limit field: empty means none (null). */
const parsed = (v: string) => (v.trim() === '' ? null : Number(v));

/** Keys and accounts with their rate limits; create, limit and revoke keys (scope mgpt.admin). */
export async function keysPage(root: HTMLElement): Promise<void> {
  const me = await whoami();
  if (!me.scopes.includes('mgpt.admin')) {
    return fill(root, h('h1', {}, 'Keys and limits'), notice('This page needs a key with the scope mgpt.admin (mgpt keys create --scopes mgpt.admin,…).', 'info'));
  }
  const [keys, accounts] = await Promise.all([api<{ data: Key[] }>('/v1/keys'), api<{ data: Account[] }>('/v1/accounts')]);
  const status = h('div', { 'aria-live': 'polite' });
  const act = (f: () => Promise<unknown>, done: string) => async () => {
    try {
      await f();
      await keysPage(root);
      root.prepend(notice(done));
    } catch (err) {
      fill(status, notice(`Failed: ${(err as Error).message}`, 'error'));
    }
  };
  const keyRows = keys.data.map((k) => {
    const rpm = h('input', { type: 'number', min: 1, value: k.rpm ?? '', 'aria-label': `requests per minute of ${k.id}` });
    const tpm = h('input', { type: 'number', min: 1, value: k.tpm ?? '', 'aria-label': `tokens per minute of ${k.id}` });
    return h('tr', { class: k.revokedAt ? 'revoked' : null },
      h('td', { class: 'mono' }, k.id), h('td', {}, accounts.data.find((a) => a.id === k.account)?.name ?? k.account), h('td', {}, k.scopes.join(', ')),
      h('td', {}, keyState(k, me.id)),
      h('td', {}, k.revokedAt ? limit(k.rpm, 'account') : rpm), h('td', {}, k.revokedAt ? limit(k.tpm, 'account') : tpm),
      h('td', {}, k.revokedAt ? '' : [
        h('button', { type: 'button', onclick: act(() => api(`/v1/keys/${encodeURIComponent(k.id)}`, { method: 'PATCH', body: { rpm: parsed(rpm.value), tpm: parsed(tpm.value) } }), `Limits of ${k.id} saved.`) }, 'Save limits'),
        k.id === me.id ? '' : h('button', { type: 'button', class: 'danger', onclick: act(() => api(`/v1/keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' }), `${k.id} revoked.`) }, 'Revoke'),
      ]));
  });
  fill(root, h('h1', {}, 'Keys and limits'), status,
    h('h2', {}, 'Keys'), h('p', { class: 'meta' }, 'An empty limit uses the account\'s default.'),
    scroller('Keys', h('table', {}, h('thead', {}, h('tr', {}, ['Key', 'Account', 'Scopes', 'State', 'RPM', 'TPM', ''].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, keyRows))),
    createKey(accounts.data, root),
    h('h2', {}, 'Accounts'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Account', 'Balance', 'Default RPM', 'Default TPM'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, accounts.data.map((a) => h('tr', {}, h('td', {}, a.name), h('td', { class: 'num' }, a.balanceUsd === null ? 'unmetered' : usd(a.balanceUsd)), h('td', { class: 'num' }, limit(a.rpm, 'none')), h('td', { class: 'num' }, limit(a.tpm, 'none')))))));
}

function createKey(accounts: Account[], root: HTMLElement): HTMLElement {
  const account = h('select', {}, accounts.map((a) => h('option', { value: a.id }, a.name)));
  const boxes = SCOPES.map((s) => h('input', { type: 'checkbox', value: s, checked: s === 'mgpt.responses:create' }));
  const shown = h('div', { 'aria-live': 'polite' });
  return h('form', {
    class: 'create',
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      try {
        const k = await api<Key>('/v1/keys', { method: 'POST', body: { account: account.value, scopes: boxes.filter((b) => b.checked).map((b) => b.value) } });
        await keysPage(root);
        root.append(h('section', { class: 'new-key', 'aria-label': 'New key' }, h('p', {}, `New key ${k.id}; its secret is shown once, here:`), h('input', { type: 'text', readonly: true, value: k.key ?? '', 'aria-label': 'The new key', class: 'mono' })));
      } catch (err) {
        fill(shown, notice(`Not created: ${(err as Error).message}`, 'error'));
      }
    },
  }, h('h2', {}, 'New key'), field('Account', account), h('fieldset', {}, h('legend', {}, 'Scopes'), SCOPES.map((s, i) => h('label', {}, boxes[i], ` ${s} `))), h('button', { type: 'submit' }, 'Create key'), shown);
}

/** Revoked, expired, or in use; a console session's key also says until when it works unless renewed. */
function keyState(k: Key, myId: string): string {
  if (k.revokedAt) return `revoked ${k.revokedAt.slice(0, 10)}`;
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return `expired ${k.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const state = k.id === myId ? 'this key' : 'active';
  return k.expiresAt ? `${state}, until ${k.expiresAt.slice(11, 16)} UTC unless its console renews it` : state;
}
