import { ApiError, api, optional } from './api.js';
import { fill, fmt, h, notice } from './dom.js';
import type { Block } from './types.js';

interface Rotation {
  id: string;
  created_at: string;
  trigger: 'turn' | 'manual' | 'resummarize';
  seq: number | null;
  from_seq: number;
  to_seq: number;
  summary: { text: string; tokens: number };
  route: { provider: string; model: string };
  usage: { prompt_tokens: number; cached_tokens: number; completion_tokens: number };
  undone: boolean;
}

/** The rotation history, newest first, each with "show the window at this turn" when the server keeps windows by turn. */
export async function rotationTimeline(root: HTMLElement, id: string, show: (seq: number, blocks: Block[]) => void): Promise<void> {
  const head = h('h3', { id: 'rot-h' }, 'Rotation history');
  const history = await optional<{ rotations: Rotation[] }>(`/v1/entities/${id}/rotations`);
  if (!history) return fill(root, head, h('p', { class: 'meta unavailable' }, 'Rotation history is not available on this server.'));
  if (!history.rotations.length) return fill(root, head, h('p', { class: 'meta' }, 'No rotation yet.'));
  const status = h('div', { 'aria-live': 'polite' });
  const items = [...history.rotations].sort((a, b) => b.created_at.localeCompare(a.created_at)).map((r) =>
    h(
      'li',
      { class: `rotation${r.undone ? ' undone' : ''}` },
      h('time', { datetime: r.created_at }, r.created_at.slice(0, 19).replace('T', ' ')),
      h('span', {}, ` ${r.trigger}${r.undone ? ' (undone)' : ''}: folded ${r.from_seq}–${r.to_seq} into ${fmt(r.summary.tokens)} tokens`),
      h('span', { class: 'meta' }, ` · ${r.route.provider}/${r.route.model} · ${fmt(r.usage.prompt_tokens)} prompt (${fmt(r.usage.cached_tokens)} cached) + ${fmt(r.usage.completion_tokens)}`),
      h('details', {}, h('summary', {}, 'Summary'), h('pre', { class: 'text' }, r.summary.text)),
      r.seq === null ? null : h('button', { type: 'button', onclick: () => void windowAt(id, r.seq!, show, status) }, `Show the window at turn ${r.seq}`),
    ),
  );
  fill(root, head, h('ol', { class: 'timeline', 'aria-labelledby': 'rot-h' }, items), status);
}

async function windowAt(id: string, seq: number, show: (seq: number, blocks: Block[]) => void, status: HTMLElement): Promise<void> {
  try {
    const w = await api<{ blocks: Block[] }>(`/v1/entities/${id}/window?at=${seq}`);
    fill(status);
    show(seq, w.blocks);
  } catch (err) {
    fill(status, notice(err instanceof ApiError && err.status === 404 ? 'The window at a past turn is not available on this server.' : `Failed: ${(err as Error).message}`, err instanceof ApiError && err.status === 404 ? 'info' : 'error'));
  }
}
