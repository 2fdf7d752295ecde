import { api } from './api.js';
import type { SearchHit } from '../core/wire/entity-types.js';
import { field, fill, h, highlighted, notice } from './dom.js';

/** A hit as GET /v1/search answers it: the server's own wire type. */
type Hit = SearchHit;

/** Where a hit lands: the message in its entity or universe, or the log record. */
function target(h: Hit): string {
  if (h.log_id) return `#/logs?id=${encodeURIComponent(h.log_id)}`;
  if (h.entity_id) return `#/entities/${h.entity_id}?seq=${h.seq}`;
  return `#/universes/${h.universe_id}?seq=${h.seq}`;
}

/** GET /v1/search over entity transcripts, universe conversations or logs; snippets with their matches marked. */
export async function searchPage(root: HTMLElement, params: URLSearchParams): Promise<void> {
  const q = h('input', { type: 'search', value: params.get('q') ?? '', required: true });
  const source = h('select', {}, ['entities', 'universes', 'logs'].map((s) => h('option', { value: s, selected: (params.get('source') ?? 'entities') === s }, s)));
  const any = h('input', { type: 'checkbox', checked: params.get('mode') === 'any' });
  const results = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    class: 'filters',
    onsubmit: (ev: Event) => {
      ev.preventDefault();
      const p = new URLSearchParams({ q: q.value, source: source.value });
      if (any.checked) p.set('mode', 'any');
      location.hash = `#/search?${p}`;
    },
  }, field('Search for', q), field('In', source), h('label', {}, any, ' any word, ranked (entities)'), h('button', { type: 'submit' }, 'Search'));
  fill(root, h('h1', {}, 'Search'), form, results);
  if (!params.get('q')) return q.focus();
  const p = new URLSearchParams({ q: params.get('q')!, source: source.value, limit: '50' });
  if (any.checked) p.set('mode', 'any');
  const found = await api<{ data: Hit[] }>(`/v1/search?${p}`);
  if (!found.data.length) return fill(results, notice('No matches.'));
  fill(results, h('ol', { class: 'hits' }, found.data.map((hit) =>
    h('li', {}, h('a', { href: target(hit) }, hit.entity_name ?? hit.universe_name ?? hit.entity_id?.slice(0, 8) ?? hit.universe_id?.slice(0, 8) ?? `log ${hit.log_id?.slice(0, 8)}`, hit.seq ? ` #${hit.seq}` : '', hit.role ? ` ${hit.role}` : ''),
      h('span', { class: 'meta' }, ` ${hit.created_at.slice(0, 16).replace('T', ' ')}`), h('p', { class: 'snippet' }, highlighted(hit.snippet, hit.highlights))))));
}
