import { BadRequestError } from '../../core/errors.js';
import { largeWork, mapInSlices } from '../../core/lane.js';
import { countEach, loadTokenEstimator } from '../../core/text/tokens.js';
import { checkWindowInvariant } from '../../core/window-plan.js';
import type { BlockRow, EntityImport, EntityRow, MessageRow } from '../../store/types.js';
import type { ClientMessage } from './chat-facade.js';
import type { EngineDeps } from '../deps.js';
import { sha256 } from '../../core/hash.js';

/** What a branch is made from: the original, the client's history and how much of it the two share. */
/** What a branch plan reads: the original's window, the clock and ids. */
type BranchDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId'>;

export interface BranchSource {
  original: EntityRow;
  /** The client's history before its new user message: whole turns. */
  history: ClientMessage[];
  /** How many of the original's transcript messages the history repeats unchanged. */
  sharedMessages: number;
  /** The branch's id, when the request names it (see branchIdFor); else a new one. */
  id?: string;
}

/**
 * A branch (the facade's opt-in answer to a contradicting history), planned but not stored: a
 * new entity with the original's head (instructions, budget, cap) whose transcript is the
 * client's history. Its window keeps the original's summaries that lie wholly before the first
 * difference and holds every later message as a message block. The turn that needed the branch
 * writes it in its own commit (turn.ts), so a refused or failed turn leaves no branch behind; that
 * turn's rotation brings the window down to the budget. The copied history is not billed.
 */
export async function planBranch(deps: BranchDeps, src: BranchSource): Promise<EntityImport> {
  checkWholeTurns(src.history);
  const tok = await loadTokenEstimator();
  // Counted in slices: a history of thousands of messages must not stall the server.
  const tokens = await countEach(tok, src.history.map((m) => m.content));
  const window = await deps.store.entities.window(src.original.id);
  const now = deps.clock.iso();
  // The rows are built in slices too (each block takes a UUID: 25,000 of them took 40-90 ms).
  const messages = await mapInSlices(src.history, (m, i): MessageRow => ({
    seq: i + 1, role: m.role as 'user' | 'assistant', content: m.content, tokens: tokens[i], createdAt: now,
  }));
  const kept = keptSummaries(deps, window, src.sharedMessages);
  const from = kept.length ? kept[kept.length - 1].coversTo : 0;
  const blocks = kept.concat(await mapInSlices(messages.slice(from), (m, i) => messageBlock(deps, m, kept.length + i + 1)));
  await largeWork.run(async () => checkBranchWindow(blocks, messages.length));
  return { entity: branchRow(deps, src, messages, blocks, now), messages, blocks, keepIds: src.id !== undefined };
}

/** A transcript message as a window block of its own. */
function messageBlock(deps: BranchDeps, m: MessageRow, position: number): BlockRow {
  return { id: deps.newId(), position, kind: 'message', role: m.role, content: m.content, tokens: m.tokens, coversFrom: m.seq, coversTo: m.seq };
}

function checkBranchWindow(blocks: readonly BlockRow[], messages: number): void {
  const broken = checkWindowInvariant(blocks.map((b) => ({ kind: b.kind, covers: [b.coversFrom, b.coversTo] })), messages);
  if (broken) throw new Error(`branch window is inconsistent: ${broken}`);
}

/** The original's summaries that lie wholly within the shared messages, in order from the first. */
function keptSummaries(deps: BranchDeps, window: readonly BlockRow[], sharedMessages: number): BlockRow[] {
  const kept: BlockRow[] = [];
  let next = 1;
  for (const b of window) {
    if (b.kind !== 'summary' || b.coversFrom !== next || b.coversTo > sharedMessages) break;
    kept.push({ ...b, id: deps.newId(), position: kept.length + 1 });
    next = b.coversTo + 1;
  }
  return kept;
}

function branchRow(deps: BranchDeps, src: BranchSource, messages: MessageRow[], blocks: BlockRow[], now: string): EntityRow {
  const o = src.original;
  return {
    ...o,
    id: src.id ?? deps.newId(),
    name: branchName(o.name),
    transcriptMessages: messages.length,
    transcriptTokens: sum(messages),
    windowTokens: sum(blocks),
    windowBlocks: blocks.length,
    createdAt: now,
    updatedAt: now,
  };
}

/** A transcript holds whole turns: user, assistant, user, assistant... */
function checkWholeTurns(history: ClientMessage[]): void {
  const odd = history.findIndex((m, i) => m.role !== (i % 2 === 0 ? 'user' : 'assistant'));
  if (odd === -1 && history.length % 2 === 0) return;
  throw new BadRequestError('a branch needs a history of whole turns (user, assistant, ...) before the new user message', {
    hint: odd === -1 ? undefined : `messages[${odd}] has role ${history[odd].role}; roles must alternate, starting with user`,
  });
}

function sum(items: ReadonlyArray<{ tokens: number }>): number {
  return items.reduce((n, x) => n + x.tokens, 0);
}

/**
 * The branch a request with an Idempotency-Key makes: the same original and key always name the
 * same branch (a UUID-shaped digest), so a retry finds the branch, and its reply, instead of
 * forking again.
 */
export function branchIdFor(originalId: string, key: string): string {
  const h = sha256(`mgpt-branch\u0000${originalId}\u0000${key}`);
  const variant = (8 | (parseInt(h[16], 16) & 3)).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function branchName(name: string): string {
  const base = name || 'entity';
  return `${base.slice(0, 190)} (branch)`;
}
