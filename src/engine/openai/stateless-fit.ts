import { ContextOverflowError } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { ChatMessage } from '../../providers/spec.js';
import type { EngineDeps } from '../deps.js';
import { PER_MESSAGE_TOKENS, messageText, promptEstimateOf } from '../generation/calibration.js';

/**
 * A stateless answer in an entity's voice (an edited chat, a side request) fitted to the model as
 * an entity turn is: the system messages and the tool round stay, then the
 * newest messages that fit; the older ones are dropped, and the caller says how many. Without a
 * known context nothing is dropped; a refusal teaches the route its context (learnOverflow) and
 * the answer is fitted again.
 */
export interface Fitted {
  messages: ChatMessage[];
  /** How many of the conversation's oldest messages were left out. */
  dropped: number;
}

export async function fitStateless(deps: Pick<EngineDeps, 'chatModel' | 'calibration'>, modelId: string, conversation: ChatMessage[], round: ChatMessage[]): Promise<Fitted> {
  const model = await deps.chatModel(modelId);
  const tok = await loadTokenEstimator();
  const count = (m: ChatMessage) => tok.count(messageText(m));
  const system = leadingSystem(conversation);
  const fixed = [...conversation.slice(0, system), ...round];
  const fit = await deps.calibration.fit(model, fixed.reduce((n, m) => n + count(m), 0), fixed.length);
  const rest = conversation.slice(system);
  if (!fit.limit) return { messages: [...conversation, ...round], dropped: 0 };
  const kept = newestWithin(rest, fit.limit.cap, count);
  return { messages: [...conversation.slice(0, system), ...kept, ...round], dropped: rest.length - kept.length };
}

/** Teaches the route what a refused stateless prompt revealed, so the next fit drops enough. */
export async function learnOverflow(deps: Pick<EngineDeps, 'chatModel' | 'calibration'>, modelId: string, err: ContextOverflowError, messages: ChatMessage[]): Promise<void> {
  const model = await deps.chatModel(modelId);
  const tok = await loadTokenEstimator();
  const estimate = promptEstimateOf(messages.reduce((n, m) => n + tok.count(messageText(m)), 0), messages.length);
  await deps.calibration.learn(model.routeKey, err, estimate, (await deps.calibration.fit(model, 0, 0)).reserveTokens);
}

function leadingSystem(messages: ChatMessage[]): number {
  let i = 0;
  while (i < messages.length && messages[i].role === 'system') i++;
  return i;
}

/** The newest messages within `cap` (the last one always), starting at a user message. */
function newestWithin(messages: ChatMessage[], cap: number, count: (m: ChatMessage) => number): ChatMessage[] {
  let used = 0;
  let from = messages.length;
  while (from > 0) {
    const cost = count(messages[from - 1]) + PER_MESSAGE_TOKENS;
    if (from < messages.length && used + cost > cap) break;
    used += cost;
    from--;
  }
  while (from < messages.length - 1 && messages[from].role !== 'user') from++;
  return messages.slice(from);
}
