import type { ChatStatus } from './chat-controller.js';
import { formatUsd } from '../core/text/numbers.js';

/** Below this many columns the status line takes its compact form. */
export const WIDE_COLUMNS = 100;

export interface StatusLine {
  /** The status itself (dim on screen). */
  text: string;
  /** While a reply comes: what is happening and how to stop it (yellow on screen); '' otherwise. */
  busy: string;
}

/**
 * The line under the conversation, fitted to `columns` so it never wraps (a wrapped status line
 * repeats on every streamed token). Wide:
 * `ada · mgpt-1-27b → openai gpt-4o-mini · local · window [██░░░░░░░░] 812/8000 tok, 12 blocks · transcript 40 msgs, 3.2k tok · $4.99 · head 120 (memory 40) + summaries 300 + live 512 + reply 256`
 * Compact (the provider's model alone says who answers): `ada · gpt-4o-mini · local · window 10% 812/8k · 40 msgs · $4.99`
 *
 * A line longer than a terminal that narrows is reflowed by the terminal onto two rows, and ink
 * then erases one row too few (a ghost line): the compact form stays as short as it can.
 */
export function statusLine(s: ChatStatus, busy: boolean, columns: number): StatusLine {
  const wide = columns >= WIDE_COLUMNS;
  const model = s.model && s.route ? (wide ? `${s.model} → ${s.route}` : providerModel(s.route)) : s.model;
  const parts = [s.label, ...(model ? [model] : []), s.backend];
  if (s.window) {
    const pct = s.window.budget ? Math.round((s.window.tokens / s.window.budget) * 100) : 0;
    parts.push(
      wide
        ? `window ${gauge(pct)} ${s.window.tokens}/${s.window.budget} tok${s.window.byModel ? ' (model limit)' : ''}, ${s.window.blocks} blocks`
        : `window ${pct}% ${compact(s.window.tokens)}/${compact(s.window.budget)}${s.window.byModel ? ' (model)' : ''}`,
    );
  }
  if (s.transcript) {
    const tokens = s.kind === 'entity' ? `, ${compact(s.transcript.tokens)} tok` : '';
    parts.push(wide ? `transcript ${s.transcript.messages} msgs${tokens}` : `${s.transcript.messages} msgs`);
  }
  if (s.readOnly) parts.push('read-only');
  if (typeof s.balanceUsd === 'number') parts.push(formatUsd(s.balanceUsd));
  // Last: on a line too narrow for all of it, the split is what gives way.
  if (s.split && wide) parts.push(splitText(s.split));
  const text = parts.join(' · ');
  const note = busy ? (wide ? '  replying… (Ctrl-C cancels)' : ' · replying…') : '';
  // The busy note matters more than the tail of the status while a reply streams.
  const room = Math.max(0, columns - 1);
  if ([...text].length + [...note].length <= room) return { text, busy: note };
  return { text: cut(text, Math.max(0, room - [...note].length)), busy: cut(note, room) };
}

/** `head 120 (memory 40) + summaries 300 + live 512 + recalled 80 + reply 256`: what the next prompt is made of. */
function splitText(s: NonNullable<ChatStatus['split']>): string {
  const head = `head ${s.head}${s.memory ? ` (memory ${s.memory})` : ''}`;
  const recalled = s.recalled ? [`recalled ${s.recalled}`] : [];
  return [head, `summaries ${s.summaries}`, `live ${s.live}`, ...recalled, ...(s.reserve === undefined ? [] : [`reply ${s.reserve}`])].join(' + ');
}

/** A route (`openai gpt-4o-mini`) without its provider. */
function providerModel(route: string): string {
  const space = route.indexOf(' ');
  return space === -1 ? route : route.slice(space + 1);
}

function cut(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 0 ? '' : `${chars.slice(0, width - 1).join('')}…`;
}

function gauge(pct: number): string {
  const filled = Math.min(10, Math.round(pct / 10));
  return `[${'█'.repeat(filled)}${'░'.repeat(10 - filled)}]`;
}

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k` : String(n);
}
