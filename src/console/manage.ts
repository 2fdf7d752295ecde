import { api } from './api.js';
import { field, fill, fmt, h, notice } from './dom.js';
import type { Entity, Memory } from './types.js';

/** What the panel's parts share: the entity, where they report, and the page's redraw after a change. */
interface Ctx {
  entity: Entity;
  status: HTMLElement;
  changed: () => Promise<void>;
}

const path = (e: Entity, rest = '') => `/v1/entities/${encodeURIComponent(e.id)}${rest}`;

/**
 * Managing an entity through the routes the CLI's remote backend uses (PATCH the entity, PUT and
 * DELETE a memory block, POST a rotation, DELETE the entity): the head's settings, pinned memory,
 * rotate and undo, delete. Undo and delete ask first, in the page.
 */
export function managePanel(root: HTMLElement, entity: Entity, memory: Memory, changed: () => Promise<void>): void {
  // The status line outlives the redraw its own change causes: what was done stays said.
  const status = root.querySelector<HTMLElement>('.manage-status') ?? h('div', { 'aria-live': 'polite', class: 'manage-status' });
  const ctx: Ctx = { entity, status, changed };
  fill(
    root,
    h('h2', { id: 'manage-h' }, 'Manage'),
    h('p', { class: 'meta' }, `Model ${entity.model}: fixed for the entity's whole life.`),
    settingsForm(ctx),
    memoryEditor(ctx, memory),
    actions(ctx),
    ctx.status,
  );
}

/** Runs one change, says how it went, and redraws the page's views of the entity. */
async function act(ctx: Ctx, done: string, change: () => Promise<unknown>, redraw = true): Promise<boolean> {
  try {
    await change();
  } catch (err) {
    fill(ctx.status, notice(`Not changed: ${(err as Error).message}`, 'error'));
    return false;
  }
  fill(ctx.status, notice(done));
  if (redraw) await ctx.changed().catch((err: Error) => ctx.status.append(notice(`Changed, but the page did not redraw: ${err.message}`, 'error')));
  return true;
}

/** Only the fields that differ from the entity are sent: an untouched field is not rewritten. */
function settingsForm(ctx: Ctx): HTMLElement {
  const e = ctx.entity;
  const instructions = h('textarea', { rows: 4 });
  instructions.value = e.instructions;
  const budget = h('input', { type: 'number', min: 16, max: 1_000_000, step: 1, value: e.window.budget_tokens, required: true });
  const recall = h('select', {}, ['auto', 'tool', 'off'].map((m) => h('option', { value: m, selected: (e.recall ?? 'off') === m }, m)));
  const recallTokens = e.recall_tokens === undefined ? null : h('input', { type: 'number', min: 0, step: 1, value: e.recall_tokens ?? '' });
  const memoryTool = h('input', { type: 'checkbox', checked: e.memory_tool === true });
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const patch: Record<string, unknown> = {};
    if (instructions.value !== e.instructions) patch.instructions = instructions.value;
    if (Number(budget.value) !== e.window.budget_tokens) patch.budget_tokens = Number(budget.value);
    if (recall.value !== (e.recall ?? 'off')) patch.recall = recall.value;
    if (recallTokens && recallTokens.value !== String(e.recall_tokens ?? '')) patch.recall_tokens = recallTokens.value === '' ? null : Number(recallTokens.value);
    if (memoryTool.checked !== (e.memory_tool === true)) patch.memory_tool = memoryTool.checked;
    if (!Object.keys(patch).length) return fill(ctx.status, notice('Nothing to save: no setting changed.'));
    await act(ctx, `Saved: ${Object.keys(patch).join(', ')}.`, () => api(path(e), { method: 'PATCH', body: patch }));
  };
  return h(
    'form',
    { class: 'settings', onsubmit: (ev: Event) => void submit(ev) },
    h('h3', {}, 'Settings'),
    field('Instructions', instructions),
    field('Window budget (tokens)', budget),
    field('Recall', recall),
    recallTokens && field('Recall tokens (empty: the default)', recallTokens),
    field('Memory tool (every turn offers the model remember)', memoryTool),
    h('button', { type: 'submit' }, 'Save settings'),
  );
}

/** Each pinned block with its remove button, and a form that sets one (a new label adds it). */
function memoryEditor(ctx: Ctx, memory: Memory): HTMLElement {
  const label = h('input', { type: 'text', maxlength: 64, required: true, spellcheck: 'false' });
  const text = h('textarea', { rows: 2, required: true });
  const blocks = memory.memory.map((m) =>
    h('li', { 'data-label': m.label }, h('strong', {}, m.label), ` · ${fmt(m.tokens)} tok `, h('button', {
      type: 'button',
      class: 'danger',
      'aria-label': `Remove pinned block ${m.label}`,
      onclick: () => void act(ctx, `Removed pinned block "${m.label}".`, () => api(path(ctx.entity, `/memory/${encodeURIComponent(m.label)}`), { method: 'DELETE' })),
    }, 'Remove')),
  );
  const set = async (ev: Event) => {
    ev.preventDefault();
    const l = label.value.trim();
    await act(ctx, `Pinned block "${l}" set.`, () => api(path(ctx.entity, `/memory/${encodeURIComponent(l)}`), { method: 'PUT', body: { text: text.value } }));
  };
  return h(
    'section',
    { class: 'pin-editor', 'aria-labelledby': 'pin-h' },
    h('h3', { id: 'pin-h' }, `Pinned memory (${memory.memory.length} of ${memory.limits.blocks} blocks)`),
    blocks.length ? h('ul', { class: 'pins' }, blocks) : null,
    h('form', { onsubmit: (ev: Event) => void set(ev) }, field('Label', label), field('Text', text), h('button', { type: 'submit' }, 'Set pinned block')),
  );
}

/** Rotate now; undo and delete each ask first, in the page, naming what they will do. */
function actions(ctx: Ctx): HTMLElement {
  const e = ctx.entity;
  const ask = h('div', { class: 'confirm' });
  const rotations = path(e, '/rotations');
  const confirm = (question: string, yes: string, run: () => Promise<void>) => {
    const cancel = h('button', { type: 'button', onclick: () => fill(ask) }, 'Cancel');
    fill(ask, h('p', { role: 'alert' }, question), h('button', { type: 'button', class: 'danger', onclick: () => (fill(ask), void run()) }, yes), cancel);
    cancel.focus();
  };
  const rotate = () => void act(ctx, 'Rotated: the oldest part of the window is folded into a summary.', () => api(rotations, { method: 'POST', body: { action: 'rotate' } }));
  const undo = () =>
    confirm('Undo the last rotation? Its summary is dropped and the messages it folded return to the window.', 'Yes, undo it', async () => {
      await act(ctx, 'Undone: the last rotation was taken back.', () => api(rotations, { method: 'POST', body: { action: 'undo' } }));
    });
  const remove = () =>
    confirm(`Delete ${e.name ? `"${e.name}"` : 'this entity'} and its whole transcript? This cannot be undone.`, 'Yes, delete it', async () => {
      if (await act(ctx, 'Deleted.', () => api(path(e), { method: 'DELETE' }), false)) location.hash = '#/entities';
    });
  return h(
    'section',
    { class: 'actions', 'aria-labelledby': 'act-h' },
    h('h3', { id: 'act-h' }, 'Window and entity'),
    h('button', { type: 'button', onclick: rotate }, 'Rotate now'),
    h('button', { type: 'button', onclick: undo }, 'Undo last rotation…'),
    h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete entity…'),
    ask,
  );
}
