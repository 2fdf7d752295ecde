import { api } from './api.js';
import { field, fill, fmt, h, notice, scroller } from './dom.js';
import { chatPane, markFolded } from './chat.js';
import { managePanel } from './manage.js';
import { memoryPanel } from './window-view.js';
import type { Entity } from './types.js';


/** The account's entities, filtered as you type, and a form to create one. */
export async function entitiesPage(root: HTMLElement): Promise<void> {
  const list = await api<{ data: Entity[] }>('/v1/entities');
  const filter = h('input', { type: 'search', placeholder: 'name or id' });
  const rows = h('tbody');
  const show = () => {
    const q = filter.value.trim().toLowerCase();
    const hits = list.data.filter((e) => !q || e.name.toLowerCase().includes(q) || e.id.startsWith(q));
    fill(
      rows,
      hits.map((e) =>
        h('tr', {}, h('td', {}, h('a', { href: `#/entities/${e.id}` }, e.name || '(no name)')), h('td', { class: 'mono' }, e.id.slice(0, 8)), h('td', { class: 'num' }, fmt(e.transcript.messages)), h('td', { class: 'num' }, fmt(e.transcript.tokens)), h('td', {}, e.updated_at.slice(0, 16).replace('T', ' '))),
      ),
    );
  };
  filter.addEventListener('input', show);
  show();
  fill(
    root,
    h('h1', {}, 'Entities'),
    createForm(),
    h('section', { 'aria-labelledby': 'ent-list' }, h('h2', { id: 'ent-list' }, `Your entities (${list.data.length})`), field('Filter', filter),
      scroller('Your entities', h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Id', 'Messages', 'Tokens', 'Last active'].map((t) => h('th', { scope: 'col' }, t)))), rows))),
  );
}

function createForm(): HTMLElement {
  const name = h('input', { type: 'text', maxlength: 200 });
  const instructions = h('textarea', { rows: 2 });
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'create',
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        try {
          const e = await api<Entity>('/v1/entities', { method: 'POST', body: { model: 'mgpt-1-27b', name: name.value, instructions: instructions.value } });
          location.hash = `#/entities/${e.id}`;
        } catch (err) {
          fill(status, notice(`Not created: ${(err as Error).message}`, 'error'));
        }
      },
    },
    h('h2', {}, 'New entity'),
    field('Name', name),
    field('Instructions', instructions),
    h('button', { type: 'submit' }, 'Create entity'),
    status,
  );
}

/** One entity: its chat on one side, what its model sees (the window and its history) on the other. */
export async function entityPage(root: HTMLElement, params: URLSearchParams, id?: string): Promise<void> {
  const entity = await api<Entity>(`/v1/entities/${encodeURIComponent(id!)}`);
  const heading = h('h1', {}, entity.name || '(no name)');
  const memory = h('section', { class: 'memory', 'aria-labelledby': 'mem-h' });
  const chat = h('section', { class: 'chat', 'aria-labelledby': 'chat-h' });
  const manage = h('section', { class: 'manage', 'aria-labelledby': 'manage-h' });
  const meta = h('p', { class: 'meta' });
  const describe = (e: Entity) => fill(meta, `${e.model} · ${fmt(e.transcript.messages)} messages · ${e.recall ? `recall ${e.recall}` : 'recall off'}`, h('span', { class: 'mono' }, ` · ${e.id}`));
  describe(entity);
  const shown = chatPane(chat, entity, Number(params.get('seq')) || undefined, () => refresh());
  const refresh = async (): Promise<void> => {
    const [now] = await Promise.all([memoryPanel(memory, entity.id), shown]);
    describe(now.entity);
    heading.textContent = now.entity.name || '(no name)';
    managePanel(manage, now.entity, now.memory, refresh);
    const firstLive = now.win.blocks.find((b) => b.kind === 'message')?.covers[0] ?? now.entity.transcript.messages + 1;
    const list = chat.querySelector<HTMLElement>('ol.messages');
    if (list) markFolded(list, firstLive);
  };
  fill(root, heading, meta, h('div', { class: 'entity' }, chat, h('div', { class: 'side' }, memory, manage)));
  await Promise.all([shown, refresh()]);
}
