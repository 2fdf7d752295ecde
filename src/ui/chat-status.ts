import { needAdmin } from './chat-errors.js';
import type { ChatOptions, ChatSources, ChatStatus, ChatTarget } from './chat-types.js';
import type { Entity } from '../core/wire/entity-types.js';
import { type MemoryList, pinnedMemoryText } from '../core/wire/memory.js';
import { loadTokenEstimator } from '../core/text/tokens.js';
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
 * The next prompt's parts (the gauge's split): instructions and pinned memory counted here with
 * the engine's estimator, summaries and live messages from the window's blocks, the reply's
 * reserve from the route's maxTokens when this process knows it. A server without the memory
 * routes (an older one) has no memory.
 */
async function promptSplit(src: ChatSources & Pick<ChatOptions, 'cutLimit'>, e: Entity): Promise<ChatStatus['split']> {
  const [window, memory, tok] = await Promise.all([
    src.backend.getWindow(e.id),
    src.backend.listMemory(e.id).catch((): MemoryList | undefined => undefined),
    loadTokenEstimator(),
  ]);
  const pinned = memory?.memory.length ? tok.count(pinnedMemoryText(memory.memory)) : 0;
  const sum = (kind: string) => window.blocks.filter((b) => b.kind === kind).reduce((n, b) => n + b.tokens, 0);
  const reserve = src.cutLimit?.(e.model)?.maxTokens;
  return {
    head: (e.instructions ? tok.count(e.instructions) : 0) + pinned,
    memory: pinned,
    summaries: sum('summary'),
    live: sum('message'),
    ...(reserve === undefined ? {} : { reserve }),
  };
}
