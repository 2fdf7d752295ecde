import { needAdmin } from './chat-errors.js';
import type { ChatOptions, ChatSources, ChatStatus, ChatTarget } from './chat-types.js';
import type { Entity } from '../core/wire/entity-types.js';
import { UNIVERSE_MODEL } from '../core/wire/universe-types.js';
import { windowLimit } from '../core/window-plan.js';

/** The status line of `target` as it is now (the balance is the controller's to add). */
export async function loadStatus(src: ChatSources & Pick<ChatOptions, 'cutLimit'>, target: ChatTarget, prev: ChatStatus, model?: string): Promise<ChatStatus> {
  if (target.kind === 'entity') {
    const e = await src.backend.getEntity(target.id);
    return {
      split: await promptSplit(src, e),
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

/**
 * The next prompt's parts (the gauge's split), as the engine counts them (`window?prompt=true`):
 * instructions, pinned memory, summaries, live messages and the recalled lines the request
 * carries; the reply's reserve from the route's maxTokens when this process knows it.
 */
async function promptSplit(src: ChatSources & Pick<ChatOptions, 'cutLimit'>, e: Entity): Promise<ChatStatus['split']> {
  const { parts } = await src.backend.getWindowPrompt(e.id);
  // A server from before the parts were reported answers with the window alone: no split then.
  if (!parts) return undefined;
  const reserve = src.cutLimit?.(e.model)?.maxTokens;
  return {
    head: parts.instructions.tokens + parts.memory.tokens,
    memory: parts.memory.tokens,
    summaries: parts.summaries.tokens,
    live: parts.messages.tokens,
    recalled: parts.recalled.tokens,
    ...(reserve === undefined ? {} : { reserve }),
  };
}
