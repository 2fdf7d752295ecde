import { sha256 } from '../../core/hash.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { RespondInput } from '../../core/wire/universe-types.js';
import { universeWindow } from '../../core/universe-window.js';
import type { ChatMessage } from '../../providers/spec.js';
import type { UniverseMessageRow } from '../../store/types.js';
import type { Loaded } from './universe-turn.js';
import { toRuntime } from './universes.js';

/** The prompt's tokens by the estimate (what a reply is billed for when the provider does not count). */
export async function promptTokens(prompt: BuiltPrompt): Promise<number> {
  const tok = await loadTokenEstimator();
  return prompt.messages.reduce((t, m) => t + tok.count(typeof m.content === 'string' ? m.content : ''), 0);
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  responseFormat?: Record<string, unknown>;
  window: { start: number; size: number; total: number; aligned: boolean };
  fingerprint: string;
}

export function buildPrompt(input: RespondInput, loaded: Loaded, messages: UniverseMessageRow[]): BuiltPrompt {
  let system = loaded.prompt?.text ?? '';
  if (input.useAdditionalInstructions && loaded.prompt?.additionalInstructions) {
    system += `\n\n${loaded.prompt.additionalInstructions}`;
  }
  const responseFormat = input.responseFormat ?? (input.useStructuredOutput ? loaded.prompt?.responseFormat : undefined);
  const runtime = messages.map(toRuntime);
  const w = loaded.mode === 'standalone' ? { start: 0, aligned: false } : universeWindow(runtime);
  const chat: ChatMessage[] = [];
  if (system) chat.push({ role: 'system', content: system });
  for (const m of runtime.slice(w.start)) chat.push(m as ChatMessage);
  return {
    messages: chat,
    responseFormat,
    window: { start: w.start, size: runtime.length - w.start, total: runtime.length, aligned: w.aligned },
    fingerprint: `sha256:${sha256(JSON.stringify(chat))}`,
  };
}
