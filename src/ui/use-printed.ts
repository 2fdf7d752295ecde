import { useRef } from 'react';
import type { ChatItem, ChatState } from './chat-types.js';

/** What goes to the terminal's scrollback for good, in order: `<Static>`'s items. */
export interface Printed {
  key: string;
  item: ChatItem;
}

/**
 * The chat's finished items, plus the finished lines of the reply streaming in, printed once; and
 * the reply's unfinished line, the only part drawn again as it grows. A long reply redrawn whole
 * on every frame cost the REPL seconds of CPU and the keys it could not read meanwhile. The reply's
 * item, when it comes, prints what the lines before it left out, so the text on screen is the reply exactly.
 */
export function usePrinted(state: ChatState): { printed: Printed[]; live: string | null } {
  const ref = useRef({ printed: [] as Printed[], seen: 0, committed: '', parts: 0 });
  const r = ref.current;
  let printed = r.printed;
  const add = (key: string, item: ChatItem) => (printed = [...printed, { key, item }]);
  for (; r.seen < state.items.length; r.seen++) {
    const item = state.items[r.seen];
    if (item.kind === 'assistant' && r.committed && item.text.startsWith(r.committed)) {
      add(String(item.id), { ...item, text: item.text.slice(r.committed.length) });
      r.committed = '';
    } else add(String(item.id), item);
  }
  if (state.streaming === null) r.committed = '';
  else if (state.streaming.startsWith(r.committed)) {
    const nl = state.streaming.lastIndexOf('\n');
    if (nl >= r.committed.length) {
      add(`part-${r.parts++}`, { id: -1, kind: 'assistant', text: state.streaming.slice(r.committed.length, nl) });
      r.committed = state.streaming.slice(0, nl + 1);
    }
  }
  r.printed = printed;
  const live = state.streaming === null ? null : state.streaming.slice(r.committed.length);
  return { printed, live };
}
