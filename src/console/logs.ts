import { ApiError, api, whoami } from './api.js';
import { field, fill, fmt, h, notice, scroller, svg, usd } from './dom.js';
import { logDetail } from './universes.js';
import type { LogList } from '../core/wire/universe-types.js';
import type { UsageLine, UsageReport, UsageTotals } from '../core/wire/usage.js';

const FILTERS = ['kind', 'requestId', 'game', 'user'] as const;

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
  const chart = h('section', { class: 'usage', 'aria-labelledby': 'usage-h' }, h('h2', { id: 'usage-h' }, 'Billed tokens and cost per day'));
  fill(root, h('h1', {}, 'Logs and usage'), filterForm(params), detail, logTable(list, params), pager(list, params), chart);
  const id = params.get('id');
  if (id) {
    const rec = await api<Record<string, unknown>>(`${base}&identifier=${encodeURIComponent(id)}`);
    fill(detail, h('h2', {}, 'Log record'), logDetail(rec));
  }
  await usageChart(chart);
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

/** Per day (UTC): the billed input and output tokens and what they cost, summed from the account's ledger (GET /v1/usage). */
async function usageChart(root: HTMLElement): Promise<void> {
  const report = await api<UsageReport>('/v1/usage?by=day');
  const rows = report.data.filter((d): d is UsageLine & { key: string } => d.key !== null).sort((a, b) => a.key.localeCompare(b.key));
  if (!rows.length) return void root.append(h('p', { class: 'meta' }, 'No charges yet.'));
  const max = Math.max(...rows.map((d) => d.input_tokens + d.output_tokens), 1);
  const W = 40;
  const H = 160;
  const bars = rows.flatMap((d, i) => {
    let y = H;
    return ([['input', d.input_tokens], ['output', d.output_tokens]] as const).map(([k, n]) => {
      const hgt = (H * n) / max;
      y -= hgt;
      return svg('rect', { x: i * W + 6, y, width: W - 12, height: hgt, class: k }, svg('title', {}, `${d.key} ${k}: ${fmt(n)} tokens`));
    });
  });
  const cells = (d: UsageTotals) => [fmt(d.charges), fmt(d.input_tokens), fmt(d.output_tokens), usd(d.cost_usd)].map((v) => h('td', { class: 'num' }, v));
  root.append(
    svg('svg', { viewBox: `0 0 ${Math.max(rows.length * W, 200)} ${H}`, class: 'chart', role: 'img', 'aria-label': 'Billed tokens per day: input and output' }, ...bars) as unknown as Node,
    h('table', { class: 'usage-table' }, h('thead', {}, h('tr', {}, ['Day', 'Charges', 'Input', 'Output', 'Cost'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((d) => h('tr', {}, h('td', {}, d.key), ...cells(d)))),
      h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, 'Total'), ...cells(report)))),
    h('p', { class: 'meta' }, 'Summed from the billing ledger: every charge of every entity turn and completion, whatever the filters above keep (mgpt usage prints the same sums).'),
  );
}
