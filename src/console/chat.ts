import { api, streamPost } from './api.js';
import { fill, fmt, h, notice } from './dom.js';
import { markdown } from './markdown.js';
import type { Entity } from './types.js';

interface Message {
  seq: number;
  role: string;
  content: string;
  tokens: number;
  created_at: string;
}

/** What the last turn sent from this tab recalled, per entity (the usage chunk's `recalled`). */
export const lastTurn = new Map<string, { recalled: Array<{ seq: number; role: string; tokens: number; content?: string }>; rotation?: { covers: [number, number]; summaryTokens: number } }>();

interface Bubble {
  el: HTMLElement;
  /** Where a streamed reply's text grows, as plain text until the reply is whole. */
  text: Text;
  body: HTMLElement;
}

/** What people and models write is Markdown; a tool's output or a system message is shown as sent. */
const rendered = (role: string) => role === 'user' || role === 'assistant';

function bubble(m: { seq?: number; role: string; content: string }): Bubble {
  const text = document.createTextNode(m.content);
  const body = h('div', { class: rendered(m.role) ? 'text md' : 'text' }, rendered(m.role) && m.content ? markdown(m.content) : text);
  const el = h('li', { class: `msg ${m.role}`, id: m.seq ? `msg-${m.seq}` : null, tabindex: '-1' }, h('span', { class: 'who' }, m.seq ? `#${m.seq} ${m.role}` : m.role), body);
  return { el, text, body };
}

/**
 * Marks the shown messages that are no longer in the window (folded into a summary; the model sees
 * them only through it, or when recall brings one back): those before `firstLive`, the window's
 * first live message. Kept on the list, so messages loaded later are marked the same way.
 */
export function markFolded(list: HTMLElement, firstLive: number): void {
  list.dataset.firstLive = String(firstLive);
  for (const el of list.querySelectorAll<HTMLElement>('li.msg[id^="msg-"]')) {
    const folded = Number(el.id.slice(4)) < firstLive;
    el.classList.toggle('folded', folded);
    el.querySelector('.folded-tag')?.remove();
    if (folded) el.querySelector('.who')!.append(h('span', { class: 'folded-tag' }, ' · folded into a summary'));
  }
}

/** The transcript (a page of it: the end, or around `seq` when a search landed here) and a message box whose replies stream. */
export async function chatPane(root: HTMLElement, entity: Entity, seq: number | undefined, changed: () => Promise<void>): Promise<void> {
  const after = seq ? Math.max(0, seq - 20) : Math.max(0, entity.transcript.messages - 100);
  const page = await api<{ data: Message[] }>(`/v1/entities/${encodeURIComponent(entity.id)}/messages?after=${after}&limit=100`);
  const list = h('ol', { class: 'messages', 'aria-label': 'Transcript' }, page.data.map((m) => bubble(m).el));
  const input = h('textarea', { rows: 3, 'aria-label': 'Message' });
  const send = h('button', { type: 'submit' }, 'Send');
  const status = h('div', { 'aria-live': 'polite', class: 'turn-status' });
  const form = h('form', { class: 'composer', onsubmit: (ev: Event) => (ev.preventDefault(), void turn()) }, input, send);
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  // `after`: the seqs up to it are not shown yet.
  fill(root, h('h2', { id: 'chat-h' }, 'Chat'), after > 0 ? earlier(list, entity.id, after) : null, list, form, status);
  if (seq) {
    const target = document.getElementById(`msg-${seq}`);
    target?.classList.add('landed');
    target?.scrollIntoView({ block: 'center' });
    target?.focus();
  } else list.lastElementChild?.scrollIntoView({ block: 'end' });

  async function turn(): Promise<void> {
    const content = input.value;
    if (!content.trim()) return;
    send.disabled = true;
    input.value = '';
    list.append(bubble({ role: 'user', content }).el);
    const reply = bubble({ role: 'assistant', content: '' });
    list.append(reply.el);
    reply.el.scrollIntoView({ block: 'nearest' });
    fill(status, notice('Answering…'));
    try {
      if (!(await stream(entity.id, content, reply, status))) return;
      // The turn is stored by now: a redraw that fails says so, and never that the turn failed.
      await Promise.all([renumber(list, entity.id), changed()]).catch((err: Error) =>
        status.append(notice(`The reply is stored, but the page did not redraw: ${err.message}`, 'error')),
      );
    } finally {
      send.disabled = false;
      input.focus();
    }
  }
}

/** Streams one turn's reply into its bubble; false (the bubble gone, the failure said) when the turn failed. */
async function stream(id: string, content: string, reply: Bubble, status: HTMLElement): Promise<boolean> {
  try {
    let usage: Record<string, any> | undefined;
    const paint = painter(reply);
    for await (const chunk of streamPost(`/v1/entities/${encodeURIComponent(id)}/messages`, { content })) {
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) paint.add(delta);
      if (chunk.usage) usage = chunk;
    }
    paint.flush();
    fill(reply.body, markdown(reply.text.data));
    lastTurn.set(id, { recalled: usage?.recalled ?? [], rotation: usage?.rotation });
    fill(status, notice(doneText(usage)));
    return true;
  } catch (err) {
    reply.el.remove();
    fill(status, notice(`The turn failed and left no trace: ${(err as Error).message}`, 'error'));
    return false;
  }
}

/** The turn's usage, and what its rotation folded (the span `mgpt rotations` lists for it). */
function doneText(usage: Record<string, any> | undefined): string {
  const u = usage?.usage;
  if (!u) return 'Done.';
  const covers = usage?.rotation?.covers as [number, number] | undefined;
  const rotated = covers ? `; the window rotated: messages ${covers[0]}–${covers[1]} were folded into a summary` : '';
  return `Done: ${fmt(u.prompt_tokens)} prompt + ${fmt(u.completion_tokens)} completion tokens${rotated}.`;
}

/** "Earlier messages": the 100 before the first one shown, put above it, until the transcript's start. */
function earlier(list: HTMLElement, id: string, hiddenUpTo: number): HTMLElement {
  let first = hiddenUpTo;
  const button = h('button', {
    type: 'button',
    onclick: async () => {
      const after = Math.max(0, first - 100);
      const page = await api<{ data: Message[] }>(`/v1/entities/${encodeURIComponent(id)}/messages?after=${after}&limit=${first - after}`);
      list.prepend(...page.data.map((m) => bubble(m).el));
      if (list.dataset.firstLive) markFolded(list, Number(list.dataset.firstLive));
      (list.firstElementChild as HTMLElement | null)?.focus();
      first = after;
      if (first === 0) button.remove();
    },
  }, 'Earlier messages');
  return button;
}

/**
 * A streamed reply reaches the page at most once a frame: a reply of thousands of deltas would
 * otherwise lay the page out thousands of times (each growing the same text node).
 */
function painter(reply: Bubble): { add(s: string): void; flush(): void } {
  let pending = '';
  let frame = 0;
  const flush = () => {
    cancelAnimationFrame(frame);
    frame = 0;
    if (!pending) return;
    reply.text.appendData(pending);
    pending = '';
    reply.el.scrollIntoView({ block: 'nearest' });
  };
  return {
    add(s) {
      pending += s;
      frame ||= requestAnimationFrame(flush);
    },
    flush,
  };
}

/** Gives the two new bubbles their seqs, from the transcript's end. */
async function renumber(list: HTMLElement, id: string): Promise<void> {
  const e = await api<Entity>(`/v1/entities/${encodeURIComponent(id)}`);
  const fresh = [...list.querySelectorAll<HTMLElement>('li.msg:not([id])')];
  fresh.forEach((el, i) => {
    const seq = e.transcript.messages - fresh.length + 1 + i;
    el.id = `msg-${seq}`;
    el.querySelector('.who')!.textContent = `#${seq} ${el.classList.contains('user') ? 'user' : 'assistant'}`;
  });
}
