import { ApiError, api } from './api.js';
import { fill, fmt, h, notice } from './dom.js';
import type { Block } from './types.js';
import type { RotationRecord } from '../core/wire/rotation-types.js';

/** One record of GET /v1/entities/{id}/rotations: the server's own wire type. */
type Rotation = RotationRecord;

/** GET /v1/entities/{id}/window?at=SEQ: the window and the prompt a past turn was answered from. */
export interface WindowAt {
  seq: number;
  tokens: number;
  blocks: Block[];
  prompt: Array<{ role: string; content: unknown }>;
}

/**
 * The rotation history, newest first, each one a turn made with "show the window at this turn".
 * Numbered as `mgpt rotations` numbers them: the oldest is 1, whatever order they are drawn in.
 */
export async function rotationTimeline(root: HTMLElement, id: string, show: (w: WindowAt) => void): Promise<void> {
  const head = h('h3', { id: 'rot-h' }, 'Rotation history');
  const history = await api<{ rotations: Rotation[] }>(`/v1/entities/${encodeURIComponent(id)}/rotations`);
  if (!history.rotations.length) return fill(root, head, h('p', { class: 'meta' }, 'No rotation yet.'));
  const status = h('div', { 'aria-live': 'polite' });
  // The server lists them oldest first (the order they were written in).
  const items = history.rotations.map((r, i) =>
    h(
      'li',
      { class: `rotation${r.undone ? ' undone' : ''}`, 'data-rotation': r.id, value: i + 1 },
      h('strong', { class: 'n' }, `Rotation ${i + 1} `),
      h('time', { datetime: r.created_at }, r.created_at.slice(0, 19).replace('T', ' ')),
      h('span', { class: 'span' }, ` ${r.trigger}${r.seq === null ? '' : ` at #${r.seq}`}${r.undone ? ' (undone)' : ''}: folded ${r.from_seq}–${r.to_seq} into ${fmt(r.summary.tokens)} tokens`),
      h('span', { class: 'meta' }, ` · window ${r.blocks_before.length} → ${r.blocks_after.length} blocks · ${r.route.provider}/${r.route.model} · ${usage(r.usage)}`),
      h('details', {}, h('summary', {}, 'Summary'), h('pre', { class: 'text' }, r.summary.text)),
      r.seq === null ? null : h('button', { type: 'button', onclick: () => void windowAt(id, r.seq!, show, status) }, `Show the window at turn ${r.seq}`),
    ),
  );
  fill(root, head, h('ol', { class: 'timeline', reversed: true, 'aria-labelledby': 'rot-h' }, items.reverse()), status);
}

function usage(u: Rotation['usage']): string {
  const cached = u.cached_tokens === null ? '' : ` (${fmt(u.cached_tokens)} cached)`;
  return `${fmt(u.prompt_tokens)} prompt${cached} + ${fmt(u.completion_tokens)}`;
}

/** A 404 here is a turn stored before the server recorded each turn's window: the server's words say so. */
async function windowAt(id: string, seq: number, show: (w: WindowAt) => void, status: HTMLElement): Promise<void> {
  try {
    const w = await api<WindowAt>(`/v1/entities/${encodeURIComponent(id)}/window?at=${seq}`);
    fill(status);
    show(w);
  } catch (err) {
    const old = err instanceof ApiError && err.status === 404;
    fill(status, notice(old ? `The window at turn ${seq} cannot be shown: ${(err as Error).message}` : `Failed: ${(err as Error).message}`, old ? 'info' : 'error'));
  }
}

/** The window a past turn saw: its blocks (each opens in `detail`) and the prompt as it was sent. */
export function windowAtView(w: WindowAt, blocks: HTMLElement): HTMLElement[] {
  const text = (c: unknown) => (typeof c === 'string' ? c : JSON.stringify(c));
  return [
    h('h3', {}, `The window at turn ${w.seq}`),
    h('p', { class: 'meta', 'data-window-tokens': w.tokens }, `${fmt(w.tokens)} tokens in ${w.blocks.length} blocks`),
    blocks,
    h('details', { class: 'prompt' }, h('summary', {}, `The prompt as sent (${w.prompt.length} messages)`),
      h('ol', {}, w.prompt.map((m) => h('li', {}, h('span', { class: 'who' }, m.role), h('pre', { class: 'text' }, text(m.content)))))),
  ];
}
