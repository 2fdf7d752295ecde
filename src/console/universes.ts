import { ApiError, api, whoami } from './api.js';
import { type Child, field, fill, fmt, h, notice, usd } from './dom.js';

interface UniverseSummary {
  id: string;
  displayName: string | null;
  storedPrompt: string;
  messages: number;
  updatedAt: string;
}
type RuntimeMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }
  | { role: 'tool'; tool_call_id: string; name?: string; content: string };
interface ToolCall {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}
interface Generation {
  assistantRaw: string;
  requestLog: { id: string };
  usageSettlement: { inputTokens: number; outputTokens: number; costUsd: number };
  toolCalls?: ToolCall[];
}

const MODELS = ['game-1-lite-frozen', 'agent-1-lite-frozen', 'general-frozen-overridable'];
const PREFIX = '/api/mgpt';

export async function universesPage(root: HTMLElement): Promise<void> {
  const list = await api<{ data: UniverseSummary[] }>(`${PREFIX}/universes`);
  const prompt = h('input', { type: 'text', required: true });
  const name = h('input', { type: 'text' });
  const status = h('div', { 'aria-live': 'polite' });
  const create = h('form', {
    class: 'create',
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      try {
        const u = await api<{ universe: string }>(`${PREFIX}/universes`, { method: 'POST', body: { storedPrompt: prompt.value, ...(name.value ? { displayName: name.value } : {}) } });
        location.hash = `#/universes/${u.universe}`;
      } catch (err) {
        fill(status, notice(`Not created: ${(err as Error).message}`, 'error'));
      }
    },
  }, h('h2', {}, 'New universe'), field('Stored prompt', prompt), field('Display name', name), h('button', { type: 'submit' }, 'Create universe'), status);
  fill(root, h('h1', {}, 'Universes'), create, h('h2', {}, `Your universes (${list.data.length})`),
    h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Prompt', 'Messages', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, list.data.map((u) => h('tr', {}, h('td', {}, h('a', { href: `#/universes/${u.id}` }, u.displayName || u.id.slice(0, 8))), h('td', {}, u.storedPrompt), h('td', { class: 'num' }, fmt(u.messages)), h('td', {}, u.updatedAt.slice(0, 16).replace('T', ' ')))))));
}

function messageItem(m: RuntimeMessage, seq: number): HTMLElement {
  const who = h('span', { class: 'who' }, `#${seq} ${m.role}${m.role === 'tool' && m.name ? ` · ${m.name}` : ''}`);
  const calls = m.role === 'assistant' && m.tool_calls?.length
    ? h('ul', { class: 'tool-calls' }, m.tool_calls.map((c) => h('li', { class: 'tool-call' }, h('strong', {}, c.function.name), h('pre', { class: 'text' }, c.function.arguments), h('span', { class: 'meta mono' }, c.id))))
    : null;
  const text = m.content ? h('pre', { class: 'text' }, m.content) : null;
  return h('li', { class: `msg ${m.role}`, id: `msg-${seq}`, tabindex: '-1' }, who, text, calls);
}

/** A universe's conversation with its tool calls and results laid out, a turn box, scene images and the turn's log record. */
export async function universePage(root: HTMLElement, params: URLSearchParams, id?: string): Promise<void> {
  const u = await api<UniverseSummary & { runtime: { conversation: RuntimeMessage[] } }>(`${PREFIX}/universes/${encodeURIComponent(id!)}`);
  const list = h('ol', { class: 'messages', 'aria-label': 'Conversation' }, u.runtime.conversation.map((m, i) => messageItem(m, i + 1)));
  const turnArea = h('div', { class: 'turn-area' });
  const logArea = h('section', { class: 'log-record', 'aria-labelledby': 'log-h' }, h('h2', { id: 'log-h' }, "The turn's log record"), h('p', { class: 'meta' }, 'Run a turn to see its record.'));
  fill(
    root,
    h('h1', {}, u.displayName || 'Universe'),
    h('p', { class: 'meta' }, `prompt ${u.storedPrompt} · `, h('span', { class: 'count' }, `${fmt(u.messages)} messages`), h('span', { class: 'mono' }, ` · ${u.id}`)),
    h('div', { class: 'entity' }, h('section', { 'aria-label': 'Conversation' }, list), h('div', {}, turnArea, imageForm(u.id, list), logArea)),
  );
  turnForm(turnArea, u.id, list, logArea);
  const seq = Number(params.get('seq'));
  const target = seq ? document.getElementById(`msg-${seq}`) : null;
  target?.classList.add('landed');
  target?.scrollIntoView({ block: 'center' });
  target?.focus();
}

function turnForm(area: HTMLElement, id: string, list: HTMLElement, logArea: HTMLElement, pending?: ToolCall[], last?: { input: string; model: string; tools?: unknown }): void {
  const input = h('textarea', { rows: 2, required: !pending, disabled: !!pending });
  if (last) input.value = last.input;
  const model = h('select', {}, MODELS.map((m) => h('option', { value: m, selected: m === last?.model }, m)));
  const tools = h('textarea', { rows: 2, placeholder: '[{"type":"function","name":"roll","parameters":{"type":"object"}}]' });
  if (last?.tools) tools.value = JSON.stringify(last.tools);
  const outputs = (pending ?? []).map((c) => ({ call: c, output: h('textarea', { rows: 2, 'aria-label': `Output of ${c.name} (${c.callId}), JSON` }), ok: h('input', { type: 'checkbox', checked: true, 'aria-label': `${c.name} succeeded` }) }));
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    class: 'composer',
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      try {
        const toolDefs = tools.value.trim() ? JSON.parse(tools.value) : undefined;
        const toolResults = outputs.length ? outputs.map((o) => ({ callId: o.call.callId, name: o.call.name, output: JSON.parse(o.output.value || '{}'), ok: o.ok.checked })) : undefined;
        const body = { model: model.value, universe: id, userInput: input.value, ...(toolDefs ? { tools: toolDefs } : {}), ...(toolResults ? { toolResults } : {}) };
        fill(status, notice('Generating…'));
        const res = await api<Generation>(`${PREFIX}/responses`, { method: 'POST', body });
        await reload(list, id);
        void showLog(logArea, res.requestLog.id);
        turnForm(area, id, list, logArea, res.toolCalls?.length ? res.toolCalls : undefined, res.toolCalls?.length ? { input: input.value, model: model.value, tools: toolDefs } : undefined);
      } catch (err) {
        fill(status, notice(`Failed: ${(err as Error).message}`, 'error'));
      }
    },
  },
  h('h2', {}, pending ? 'Answer the tool calls' : 'Next turn'),
  field('User input', input), field('Model', model), field('Tools (JSON, optional)', tools),
  outputs.map((o) => h('fieldset', {}, h('legend', {}, `${o.call.name} ${JSON.stringify(o.call.arguments)}`), o.output, h('label', {}, o.ok, ' ok'))),
  h('button', { type: 'submit' }, pending ? 'Send the results' : 'Generate'), status);
  fill(area, form);
}

async function reload(list: HTMLElement, id: string): Promise<void> {
  const u = await api<{ runtime: { conversation: RuntimeMessage[] } }>(`${PREFIX}/universes/${encodeURIComponent(id)}`);
  const images = [...list.querySelectorAll('li.scene')];
  fill(list, u.runtime.conversation.map((m, i) => messageItem(m, i + 1)), images);
  const count = document.querySelector('.meta .count');
  if (count) count.textContent = `${fmt(u.runtime.conversation.length)} messages`;
}

function imageForm(id: string, list: HTMLElement): HTMLElement {
  const description = h('textarea', { rows: 2, required: true });
  const system = h('input', { type: 'text', value: 'Draw the scene.' });
  const status = h('div', { 'aria-live': 'polite' });
  return h('form', {
    class: 'composer',
    onsubmit: async (ev: Event) => {
      ev.preventDefault();
      try {
        fill(status, notice('Drawing…'));
        const res = await api<{ images: Array<{ mimeType: string; data: string }> }>(`${PREFIX}/images`, { method: 'POST', body: { sceneUid: `${id}:${Date.now()}`, systemPrompt: system.value, description: description.value } });
        const figs: Child[] = res.images.filter((i) => /^image\/(png|jpeg|gif|webp)$/.test(i.mimeType) && /^[A-Za-z0-9+/=]+$/.test(i.data)).map((i) => h('img', { src: `data:${i.mimeType};base64,${i.data}`, alt: `scene: ${description.value}` }));
        list.append(h('li', { class: 'msg scene' }, h('span', { class: 'who' }, 'scene image'), h('p', { class: 'text' }, description.value), figs));
        fill(status);
      } catch (err) {
        fill(status, notice(`Failed: ${(err as Error).message}`, 'error'));
      }
    },
  }, h('h2', {}, 'Scene image'), field('Description', description), field('System prompt', system), h('button', { type: 'submit' }, 'Draw'), status);
}

/** One log record in detail (GET /logs?identifier=…), as a definition list of its fields. */
export async function showLog(root: HTMLElement, logId: string): Promise<void> {
  const heading = root.querySelector('h2')?.cloneNode(true) ?? null;
  try {
    const me = await whoami();
    const rec = await api<Record<string, unknown>>(`${PREFIX}/logs?ownerUserId=${encodeURIComponent(me.user)}&identifier=${encodeURIComponent(logId)}`);
    fill(root, heading, logDetail(rec));
  } catch (err) {
    const scope = err instanceof ApiError && err.status === 403;
    fill(root, heading, notice(scope ? 'This key lacks the scope mgpt.logs:read, so the log record is not shown.' : `Failed: ${(err as Error).message}`, scope ? 'info' : 'error'));
  }
}

export function logDetail(rec: Record<string, unknown>): HTMLElement {
  const value = (v: unknown) => (typeof v === 'object' && v !== null ? h('pre', { class: 'text' }, JSON.stringify(v, null, 2)) : String(v));
  return h('dl', { class: 'record', 'data-log': String(rec.id) }, Object.entries(rec).map(([k, v]) => [h('dt', {}, k), h('dd', {}, k === 'costUsd' && typeof v === 'number' ? usd(v) : value(v))]));
}
