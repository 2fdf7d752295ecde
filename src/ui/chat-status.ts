import { needAdmin } from './chat-errors.js';
import type { ChatSources, ChatStatus, ChatTarget } from './chat-types.js';
import { UNIVERSE_MODEL } from '../core/universe-types.js';
import { windowLimit } from '../core/window-plan.js';

/** The status line of `target` as it is now (the balance is the controller's to add). */
export async function loadStatus(src: ChatSources, target: ChatTarget, prev: ChatStatus, model?: string): Promise<ChatStatus> {
  if (target.kind === 'entity') {
    const e = await src.backend.getEntity(target.id);
    return {
      ...prev,
      kind: 'entity',
      id: e.id,
      label: e.name || e.id.slice(0, 8),
      model: e.model,
      window: { tokens: e.window.tokens ?? 0, budget: windowLimit(e.window).tokens, byModel: windowLimit(e.window).byModel, blocks: e.window.blocks ?? 0 },
      transcript: { messages: e.transcript.messages, tokens: e.transcript.tokens, cap: e.transcript.cap_tokens },
      readOnly: e.read_only,
    };
  }
  const u = await needAdmin(src, 'universes show').getUniverse(target.id);
  return {
    kind: 'universe',
    id: u.id,
    backend: src.backend.kind,
    label: u.displayName || `${u.storedPrompt} ${u.id.slice(0, 8)}`,
    model: model ?? UNIVERSE_MODEL,
    transcript: { messages: u.messages, tokens: 0, cap: 0 },
  };
}
