import { ApiError, api, whoami } from './api.js';
import { field, fill, fmt, h, notice, scroller, svg, usd } from './dom.js';
import { logDetail } from './universes.js';
import type { LogList } from '../core/wire/universe-types.js';

const FILTERS = ['kind', 'requestId', 'game', 'user'] as const;
/** The chart reads at most this many records (10 pages of 100). */
const CHART_RECORDS = 1000;

/** Generation logs: a filtered, paged table, one record's detail (`?id=`), and tokens and cost per day. */
export async function logsPage(root: HTMLElement, params: URLSearchParams): Promise<void> {
  const me = await whoami();
  const base = `/api/mgpt/logs?ownerUserId=${encodeURIComponent(me.user)}`;
  const query = FILTERS.filter((f) => params.get(f)).map((f) => `&${f}=${encodeURIComponent(params.get(f)!)}`).join('');
  const page = Number(params.get('page')) || 1;
  let list: LogList;
  try {
    list = await api<LogList>(`${base}${query}&page=${page}&pageSize=50`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return fill(root, h('h1', {}, 'Logs and usage'), notice('This key lacks the scope mgpt.logs:read.', 'error'));
    throw err;
  }
  const detail = h('section', { class: 'log-record', 'aria-live': 'polite' });
  const chart = h('section', { class: 'usage', 'aria-labelledby': 'usage-h' }, h('h2', { id: 'usage-h' }, 'Tokens and cost per day'));
  fill(root, h('h1', {}, 'Logs and usage'), filterForm(params), detail, logTable(list, params), pager(list, params), chart);
  const id = params.get('id');
  if (id) {
    const rec = await api<Record<string, unknown>>(`${base}&identifier=${encodeURIComponent(id)}`);
    fill(detail, h('h2', {}, 'Log record'), logDetail(rec));
  }
  await usageChart(chart, base + query);
}

function filterForm(params: URLSearchParams): HTMLElement {
  const kind = h('select', {}, ['', 'text', 'image'].map((k) => h('option', { value: k, selected: params.get('kind') === k }, k || 'any')));
  const inputs = { kind, requestId: h('input', { type: 'text', value: params.get('requestId') ?? '' }), game: h('input', { type: 'text', value: params.get('game') ?? '' }), user: h('input', { type: 'text', value: params.get('user') ?? '' }) };
  return h('form', {
    class: 'filters',
    onsubmit: (ev: Event) => {
      ev.preventDefault();
      const q = new URLSearchParams();
      for (const f of FILTERS) if (inputs[f].value) q.set(f, inputs[f].value);
      location.hash = `#/logs?${q}`;
    },
  }, field('Kind', kind), field('Request id', inputs.requestId), field('Game', inputs.game), field('User', inputs.user), h('button', { type: 'submit' }, 'Filter'));
}

function logTable(list: LogList, params: URLSearchParams): HTMLElement {
  const link = (id: string) => {
    const q = new URLSearchParams(params);
    q.set('id', id);
    return `#/logs?${q}`;
  };
  const cols = ['Time', 'Kind', 'Model', 'Status', 'Input', 'Cached', 'Output', 'Cost', 'ms', 'Universe', 'Request id'];
  return scroller('Log records', h('table', { class: 'logs' }, h('caption', {}, `${fmt(list.total)} records`), h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, list.data.map((r) => h('tr', {},
      h('td', {}, h('a', { href: link(r.id) }, r.createdAt.slice(0, 19).replace('T', ' '))),
      h('td', {}, r.facade ? `${r.kind}/${r.facade}` : r.kind), h('td', {}, r.model), h('td', {}, r.error ? `${r.status}: ${r.error}` : r.status),
      h('td', { class: 'num' }, fmt(r.inputTokens)), h('td', { class: 'num' }, r.cachedInputTokens === undefined ? '' : fmt(r.cachedInputTokens)), h('td', { class: 'num' }, fmt(r.outputTokens)),
      h('td', { class: 'num' }, usd(r.costUsd)), h('td', { class: 'num' }, fmt(r.totalMs)),
      h('td', {}, r.universeId ? h('a', { href: `#/universes/${r.universeId}` }, r.universeId.slice(0, 8)) : ''),
      h('td', { class: 'mono' }, r.requestId ?? ''))))));
}

function pager(list: LogList, params: URLSearchParams): HTMLElement {
  const to = (p: number) => {
    const q = new URLSearchParams(params);
    q.set('page', String(p));
    q.delete('id');
    return `#/logs?${q}`;
  };
  return h('nav', { 'aria-label': 'Pages', class: 'pager' }, list.page > 1 ? h('a', { href: to(list.page - 1) }, 'Newer') : null, ` page ${list.page} `, list.hasMore ? h('a', { href: to(list.page + 1) }, 'Older') : null);
}

interface Day {
  day: string;
  fresh: number;
  cached: number;
  output: number;
  cost: number;
}

/** Per day (UTC): input not cached, input from the provider's cache, output; and cost. From the newest records the filters keep. */
async function usageChart(root: HTMLElement, path: string): Promise<void> {
  const days = new Map<string, Day>();
  let read = 0;
  for (let page = 1; read < CHART_RECORDS; page++) {
    const list = await api<LogList>(`${path}&page=${page}&pageSize=100`);
    for (const r of list.data) {
      const day = r.createdAt.slice(0, 10);
      const d = days.get(day) ?? { day, fresh: 0, cached: 0, output: 0, cost: 0 };
      const cached = r.cachedInputTokens ?? 0;
      Object.assign(d, { fresh: d.fresh + r.inputTokens - cached, cached: d.cached + cached, output: d.output + r.outputTokens, cost: d.cost + r.costUsd });
      days.set(day, d);
    }
    read += list.data.length;
    if (!list.hasMore) break;
  }
  const rows = [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
  if (!rows.length) return void root.append(h('p', { class: 'meta' }, 'No records yet.'));
  const max = Math.max(...rows.map((d) => d.fresh + d.cached + d.output), 1);
  const W = 40;
  const H = 160;
  const bars = rows.flatMap((d, i) => {
    let y = H;
    return (['fresh', 'cached', 'output'] as const).map((k) => {
      const hgt = (H * d[k]) / max;
      y -= hgt;
      return svg('rect', { x: i * W + 6, y, width: W - 12, height: hgt, class: k }, svg('title', {}, `${d.day} ${k}: ${d[k]}`));
    });
  });
  root.append(
    svg('svg', { viewBox: `0 0 ${Math.max(rows.length * W, 200)} ${H}`, class: 'chart', role: 'img', 'aria-label': 'Tokens per day: input, cached input and output' }, ...bars) as unknown as Node,
    h('table', { class: 'usage-table' }, h('thead', {}, h('tr', {}, ['Day', 'Input (not cached)', 'Cached input', 'Output', 'Cost'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((d) => h('tr', {}, h('td', {}, d.day), h('td', { class: 'num' }, fmt(d.fresh)), h('td', { class: 'num' }, fmt(d.cached)), h('td', { class: 'num' }, fmt(d.output)), h('td', { class: 'num' }, usd(d.cost)))))),
    h('p', { class: 'meta' }, `From the ${fmt(read)} newest records${read >= CHART_RECORDS ? ' (older ones are not counted)' : ''}. Entity turns have a record only when recall brought earlier messages in or the model called tools; the ledger of every turn is not on the API.`),
  );
}
