import { api } from './api.js';
import { type Child, fill, fmt, h, notice } from './dom.js';
import { lastTurn } from './chat.js';
import type { Block, Entity, Memory, WindowPrompt } from './types.js';
import { rotationTimeline, windowAtView } from './rotations.js';


/**
 * What the model sees, drawn and listed: the next request's bar (every part of it, as the engine
 * counts it), the window's blocks, the recalled lines the request carries, the last turn's recall,
 * pinned memory and the rotation history. The console comes with its server, so these routes are
 * always there.
 */
export async function memoryPanel(root: HTMLElement, id: string): Promise<{ entity: Entity; win: WindowPrompt; memory: Memory }> {
  const [entity, win, memory] = await Promise.all([
    api<Entity>(`/v1/entities/${encodeURIComponent(id)}`),
    api<WindowPrompt>(`/v1/entities/${encodeURIComponent(id)}/window?prompt=true`),
    api<Memory>(`/v1/entities/${encodeURIComponent(id)}/memory`),
  ]);
  const detail = h('div', { class: 'block-detail', 'aria-live': 'polite' });
  const rotations = h('div', { class: 'rotations' });
  fill(
    root,
    h('h2', { id: 'mem-h' }, 'What the model sees'),
    windowBar(win),
    h('h3', {}, `Window blocks (${win.blocks.length})`),
    blockList(win.blocks, detail),
    detail,
    inViewView(win),
    recalledView(id),
    memoryView(entity, memory),
    rotations,
  );
  // The history failing to load is said in its place; the rest of the panel stays.
  await rotationTimeline(rotations, id, (w) => opened(detail, ...windowAtView(w, blockList(w.blocks, detail)))).catch((err: Error) =>
    fill(rotations, h('h3', {}, 'Rotation history'), notice(`The rotation history did not load: ${err.message}`, 'error')),
  );
  return { entity, win, memory };
}

/** What a click opened, drawn in `detail` and brought into view: it may be far from the button. */
function opened(detail: HTMLElement, ...children: Child[]): void {
  fill(detail, ...children);
  detail.scrollIntoView({ block: 'start' });
}

/**
 * The next request part by part (instructions, pinned memory, summaries, live messages, recalled
 * lines), then the room the window has left under its limit (the budget, or the model's when smaller).
 */
export function windowBar(win: WindowPrompt): HTMLElement {
  const p = win.parts;
  const limit = win.model_limit_tokens ?? win.budget_tokens;
  const parts: Array<[string, string, number]> = [
    ['head', `head (instructions ${fmt(p.instructions.tokens)}, pinned memory ${fmt(p.memory.tokens)})`, p.instructions.tokens + p.memory.tokens],
    ['summaries', 'summaries', p.summaries.tokens],
    ['live', 'live messages', p.messages.tokens],
    ['recalled', `recalled lines (${p.recalled.lines.length})`, p.recalled.tokens],
    ['reserve', 'reserve (room left under the limit for the reply and what follows)', Math.max(0, limit - win.tokens)],
  ];
  const total = win.prompt_tokens;
  const scale = Math.max(total + parts[4][2], 1);
  const bar = h(
    'div',
    { class: 'bar', role: 'img', 'aria-label': `next request ${total} tokens; window ${win.tokens} of ${limit} tokens` },
    parts.map(([part, , n]) => h('span', { class: `seg ${part}`, 'data-part': part, 'data-tokens': n, title: `${part}: ${n}` })),
  );
  // Widths through the CSSOM (no inline style attribute: the policy forbids those).
  [...bar.children].forEach((seg, i) => ((seg as HTMLElement).style.width = `${(100 * parts[i][2]) / scale}%`));
  const binding = win.model_limit_tokens !== undefined ? `the model's limit ${fmt(win.model_limit_tokens)} binds (budget ${fmt(win.budget_tokens)})` : `budget ${fmt(win.budget_tokens)}`;
  return h(
    'figure',
    { class: 'window' },
    bar,
    h('figcaption', {}, h('strong', { 'data-prompt-tokens': total }, `next request ${fmt(total)} tokens`), ' before the new message; ',
      h('span', { 'data-window-tokens': win.tokens }, `window ${fmt(win.tokens)} tokens`), ` of ${binding}`,
      h('ul', { class: 'legend' }, parts.map(([part, label, n]) => h('li', {}, h('span', { class: `swatch ${part}`, 'aria-hidden': 'true' }), `${label}: ${fmt(n)}`)))),
  );
}

/** The recalled lines the next request carries (earlier turns' recall still in view), each with its text. */
function inViewView(win: WindowPrompt): HTMLElement {
  const lines = win.parts.recalled.lines;
  const body: Child = lines.length === 0
    ? h('p', { class: 'meta' }, 'The next request carries no recalled lines.')
    : h('ol', { class: 'in-view' }, lines.map((l) => h('li', { 'data-seq': l.seq }, `#${l.seq} ${l.role} · ${fmt(l.tokens)} tok: `, l.content ?? '')));
  return h('section', { 'aria-labelledby': 'view-h' }, h('h3', { id: 'view-h' }, 'Recalled lines in the next request'), body);
}

/** A list longer than this shows its first and last few blocks, and a button for the rest. */
const COLLAPSE_OVER = 12;
const SHOWN_AT_EACH_END = 4;

function blockList(blocks: Block[], detail: HTMLElement): HTMLElement {
  const item = (b: Block) =>
    h('li', {}, h('button', {
      type: 'button',
      class: `block ${b.kind}`,
      'data-block': b.id,
      onclick: () => showBlock(detail, b),
    }, b.kind === 'summary' ? `summary of ${b.covers[0]}–${b.covers[1]}` : `#${b.covers[0]} ${b.role}`, ` · ${fmt(b.tokens)} tok`));
  if (blocks.length <= COLLAPSE_OVER) return h('ol', { class: 'blocks' }, blocks.map(item));
  const hidden = blocks.slice(SHOWN_AT_EACH_END, -SHOWN_AT_EACH_END);
  const more = h('li', { class: 'more' }, h('button', {
    type: 'button',
    class: 'link show-all',
    onclick: () => {
      more.replaceWith(...hidden.map(item));
      (list.children[SHOWN_AT_EACH_END]?.querySelector('button') as HTMLElement | null)?.focus();
    },
  }, `Show all ${blocks.length} blocks (${hidden.length} more)`));
  const list = h('ol', { class: 'blocks' }, blocks.slice(0, SHOWN_AT_EACH_END).map(item), more, blocks.slice(-SHOWN_AT_EACH_END).map(item));
  return list;
}

function showBlock(detail: HTMLElement, b: Block): void {
  const covers = b.kind === 'summary' ? `Covers seqs ${b.covers[0]}–${b.covers[1]}` : `Message seq ${b.covers[0]}`;
  opened(detail, h('h3', {}, b.kind === 'summary' ? 'Summary block' : `${b.role} message`), h('p', { class: 'covers' }, covers, ` · ${fmt(b.tokens)} tokens`), h('pre', { class: 'text', tabindex: '0' }, b.content));
}

function recalledView(id: string): HTMLElement {
  const last = lastTurn.get(id);
  const link = (r: { seq: number }) => h('a', { href: `#/entities/${id}?seq=${r.seq}`, 'data-seq': r.seq }, `#${r.seq}`);
  const body: Child = !last
    ? h('p', { class: 'meta' }, 'Send a turn here to see what it recalled.')
    : last.recalled.length === 0
      ? h('p', { class: 'recalled none' }, 'The last turn recalled nothing.')
      : [
          h('p', { class: 'recalled' }, 'The last turn recalled ', last.recalled.map((r, i) => [i ? ', ' : '', link(r)]), ` (${fmt(last.recalled.reduce((n, r) => n + r.tokens, 0))} tokens).`),
          // Each line's text as the prompt carried it (a server from before the text was carried sends seqs only).
          h('ol', { class: 'recalled-lines' }, last.recalled.filter((r) => r.content !== undefined).map((r) => h('li', {}, link(r), ` ${r.role}: `, r.content ?? ''))),
        ];
  return h('section', { 'aria-labelledby': 'rec-h' }, h('h3', { id: 'rec-h' }, 'Recalled by the last turn'), body);
}

function memoryView(entity: Entity, memory: Memory): HTMLElement {
  const instr = h('details', {}, h('summary', {}, 'Instructions'), h('pre', { class: 'text' }, entity.instructions || '(none)'));
  const pinned =
    memory.memory.length === 0
      ? h('p', { class: 'meta' }, `No pinned memory (up to ${memory.limits.blocks} blocks, ${fmt(memory.limits.tokens)} tokens).`)
      : h('dl', { class: 'pinned' }, memory.memory.map((m) => [h('dt', {}, `${m.label} · ${fmt(m.tokens)} tok`), h('dd', {}, m.text)]));
  return h('section', { 'aria-labelledby': 'head-h' }, h('h3', { id: 'head-h' }, 'Head: instructions and pinned memory'), instr, pinned);
}
