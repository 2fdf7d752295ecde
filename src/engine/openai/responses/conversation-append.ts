import { BadRequestError, ConflictError, NotFoundError } from '../../../core/errors.js';
import { countEach, loadTokenEstimator } from '../../../core/text/tokens.js';
import type { BlockRow, EntityRow, MessageRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import { entitySubject, takeLease } from '../../support/lease.js';

type AppendDeps = Pick<EngineDeps, 'store' | 'clock' | 'limits' | 'newId'>;

/** A message of a conversation, as the transcript takes it. */
export interface HeldMessage {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * The whole turns in `messages` (a user message, then the reply), and what is left over: the
 * transcript holds only whole turns, so a user message waiting for its reply is held until it
 * comes. Messages of one role in a row are one message (an input added in parts, a reply told in two).
 */
export function wholeTurns(messages: readonly HeldMessage[]): { turns: HeldMessage[]; held: HeldMessage[] } {
  const merged: HeldMessage[] = [];
  for (const m of messages) {
    const last = merged[merged.length - 1];
    if (last?.role === m.role) merged[merged.length - 1] = { role: m.role, text: `${last.text}\n\n${m.text}` };
    else merged.push({ ...m });
  }
  if (merged[0]?.role === 'assistant') {
    throw new BadRequestError('an assistant message needs the user message it answers before it', { hint: 'add the user message and its reply together' });
  }
  const whole = merged.length - (merged.length % 2);
  return { turns: merged.slice(0, whole), held: merged.slice(whole) };
}

/**
 * Appends whole turns to an entity without a model call, under its lease, in one unit of work
 * (OpenAI's "add items to a conversation"). Each message joins the window as a block of its own;
 * when that puts the window over its budget, the entity's next turn rotates it, as after a
 * smaller budget.
 */
export async function appendTurns(deps: AppendDeps, accountId: string, entityId: string, turns: readonly HeldMessage[], source: { id: string; items: number }): Promise<number> {
  if (turns.length === 0) return 0;
  const lease = await takeLease(deps, { subject: entitySubject(entityId), refused: () => new ConflictError(`conversation ${source.id} is answering a response`, { hint: 'add the items after it finishes' }) });
  try {
    const row = await deps.store.entities.get(accountId, entityId);
    if (!row) throw new NotFoundError(`Conversation with id '${source.id}' not found.`);
    const tok = await loadTokenEstimator();
    const tokens = await countEach(tok, turns.map((t) => t.text));
    const now = deps.clock.iso();
    const messages: MessageRow[] = turns.map((t, i) => ({ seq: row.transcriptMessages + i + 1, role: t.role, content: t.text, tokens: tokens[i], createdAt: now }));
    const blocks = await blocksAfter(deps, row, messages);
    const counters = countersOf(row, messages, blocks, now);
    const append = { entityId, messages, deleteBlockIds: [], insertBlocks: blocks, counters };
    const sourceRow = { accountId, source: 'openai-conversation', sourceId: source.id, target: '', entityId, lastMessageId: `${counters.transcriptMessages}`, sourceMessages: source.items, importedAt: now };
    await lease.write((claim) => deps.store.entities.importChat({ append: { ...append, lease: claim }, source: sourceRow }), () => new ConflictError(`conversation ${source.id}: another writer took its lease`), false);
    return messages.length;
  } finally {
    await lease.release();
  }
}

async function blocksAfter(deps: AppendDeps, row: EntityRow, messages: MessageRow[]): Promise<BlockRow[]> {
  const window = await deps.store.entities.window(row.id);
  let position = window.reduce((p, b) => Math.max(p, b.position), 0);
  return messages.map((m) => ({ id: deps.newId(), position: ++position, kind: 'message', role: m.role, content: m.content, tokens: m.tokens, coversFrom: m.seq, coversTo: m.seq }));
}

function countersOf(row: EntityRow, messages: MessageRow[], blocks: BlockRow[], now: string) {
  const added = messages.reduce((n, m) => n + m.tokens, 0);
  return {
    transcriptMessages: row.transcriptMessages + messages.length,
    transcriptTokens: row.transcriptTokens + added,
    windowTokens: row.windowTokens + blocks.reduce((n, b) => n + b.tokens, 0),
    windowBlocks: row.windowBlocks + blocks.length,
    updatedAt: now,
  };
}
