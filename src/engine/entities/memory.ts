import { BadRequestError, NotFoundError } from '../../core/errors.js';
import { MEMORY_LABEL, type MemoryBlock, type MemoryHistory, type MemoryList, pinnedMemoryText } from '../../core/wire/memory.js';
import { loadTokenEstimator, tokenUpperBound } from '../../core/text/tokens.js';
import type { EntityRow, MemoryRow, MemoryWrite, MemoryWriteResult } from '../../store/types.js';
import { entityLabel } from '../../core/ref.js';
import type { EngineDeps } from '../deps.js';

/**
 * Pinned memory: named text blocks in an entity's head. The model sees them in one
 * system message right after the instructions (core/wire/memory.ts says how); they are never rotated,
 * are not window blocks, and count in the fit against the model's context like the instructions.
 * Every change is kept with its text before and after and who made it. The rules live here, so
 * the local engine and `mgpt serve` refuse the same input.
 */
export class MemoryService {
  constructor(private readonly deps: EngineDeps) {}

  /** The blocks by label, their tokens and the limits. */
  async list(entityId: string, accountId: string): Promise<MemoryList> {
    const rows = await this.deps.store.memory.list((await this.owned(entityId, accountId)).id);
    return { memory: rows.map(toBlock), tokens: rows.reduce((n, r) => n + r.tokens, 0), limits: { ...this.deps.limits.memory } };
  }

  /** Every change, oldest first. */
  async history(entityId: string, accountId: string): Promise<MemoryHistory> {
    const rows = await this.deps.store.memory.history((await this.owned(entityId, accountId)).id);
    return { history: rows.map((h) => ({ label: h.label, before: h.before, after: h.after, source: h.source, created_at: h.createdAt })) };
  }

  async get(entityId: string, label: unknown, accountId: string): Promise<MemoryBlock> {
    const l = checkLabel(label);
    const entity = await this.owned(entityId, accountId);
    const row = (await this.deps.store.memory.list(entity.id)).find((r) => r.label === l);
    if (!row) throw noBlock(entity, l);
    return toBlock(row);
  }

  /** Sets one block (the user's change, with its history row); a refusal changes nothing. */
  async set(entityId: string, label: unknown, text: unknown, accountId: string): Promise<MemoryBlock> {
    const [l, t] = [checkLabel(label), checkText(text)];
    const write = await memoryWrite(this.deps, (await this.owned(entityId, accountId)).id, l, t, 'user');
    const result = await this.deps.store.memory.write(write);
    return toBlock(settled(entityId, write, result) ?? { label: l, text: t, tokens: write.tokens, updatedAt: write.at });
  }

  /** Removes one block (with its history row); 404 when there is none. */
  async remove(entityId: string, label: unknown, accountId: string): Promise<void> {
    const entity = await this.owned(entityId, accountId);
    const write = await memoryWrite(this.deps, entity.id, checkLabel(label), null, 'user');
    const result = await this.deps.store.memory.write(write);
    if (result.kind === 'same') throw noBlock(entity, write.label);
    settled(entityId, write, result);
  }

  /** The entity when it is the account's; another account's entity is a 404 like a missing one. */
  private async owned(entityId: string, accountId: string): Promise<EntityRow> {
    const row = typeof entityId === 'string' ? await this.deps.store.entities.get(accountId, entityId) : undefined;
    if (!row) throw notFound(entityId);
    return row;
  }
}

/** The store's write for one change, counted; `text` null removes the block. */
export async function memoryWrite(deps: EngineDeps, entityId: string, label: string, text: string | null, source: 'user' | 'model'): Promise<MemoryWrite> {
  const tokens = text === null ? 0 : (await loadTokenEstimator()).count(text);
  return { entityId, label, text, tokens, source, at: deps.clock.iso(), limits: { ...deps.limits.memory } };
}

/**
 * The pinned memory message a turn sends after the instructions, and its tokens; undefined without
 * blocks. The tokens are the blocks' stored counts plus a bound for the heading and the labels, so
 * a turn never waits for the tokenizer's tables to load for them (see MessageCount).
 */
export async function pinnedMemory(deps: EngineDeps, entityId: string): Promise<PinnedMemory | undefined> {
  const rows = await deps.store.memory.list(entityId);
  if (!rows.length) return undefined;
  const text = pinnedMemoryText(rows);
  const frame = tokenUpperBound(pinnedMemoryText(rows.map((r) => ({ label: r.label, text: '' }))));
  return { blocks: rows, text, tokens: rows.reduce((n, r) => n + r.tokens, 0) + frame };
}

/** A change the model made in a turn (remember.ts): the block's text before (for the log) and the write the commit applies. */
export interface Remembered {
  label: string;
  before: string | null;
  after: string;
  write: MemoryWrite;
}

/** What a turn shows the model of its entity's pinned memory. */
export interface PinnedMemory {
  blocks: MemoryRow[];
  text: string;
  tokens: number;
}

/** The block a write left, or the error it met (over a limit, or the entity gone). */
export function settled(entityId: string, w: MemoryWrite, r: MemoryWriteResult): MemoryRow | undefined {
  if (r.kind === 'missing') throw notFound(entityId);
  if (r.kind === 'over') throw overLimits(w, r);
  if (r.kind === 'same') return r.before;
  return r.after;
}

export function overLimits(w: MemoryWrite, r: { blocks: number; tokens: number }): BadRequestError {
  const { blocks, tokens } = w.limits;
  const what = r.blocks > blocks
    ? `a block labelled ${JSON.stringify(w.label)} would make ${r.blocks} blocks; the limit is ${blocks}`
    : `block ${JSON.stringify(w.label)} would bring pinned memory to ${r.tokens} tokens; the limit is ${tokens}`;
  return new BadRequestError(`pinned memory is full: ${what}; nothing was changed`, {
    hint: 'shorten or remove a block (mgpt memory rm ENTITY LABEL), or raise the limit: mgpt config set engine.memoryTokens N (engine.memoryBlocks N)',
  });
}

/** A label as the rules allow it, or a 400 that says them. */
export function checkLabel(label: unknown): string {
  if (typeof label !== 'string' || !MEMORY_LABEL.test(label)) {
    const shown = typeof label === 'string' ? JSON.stringify(label.length > 80 ? `${label.slice(0, 80)}…` : label) : typeof label;
    throw new BadRequestError(`invalid memory label ${shown}: a label is 1 to 64 letters, digits, "_", "-" or ".", starting with a letter or digit`, {
      hint: 'for example: name, project, user.preferences',
    });
  }
  return label;
}

export function checkText(text: unknown): string {
  if (typeof text !== 'string') throw new BadRequestError('text must be a string', { hint: 'send {"text": "..."}' });
  if (text.trim() === '') throw new BadRequestError('text is empty', { hint: 'to remove a block: mgpt memory rm ENTITY LABEL (DELETE .../memory/LABEL)' });
  return text;
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`no entity ${id} on this account`, { hint: 'list entities with: mgpt entities list' });
}

/** Named as its user names the entity (the id goes with the error, for machine output). */
function noBlock(entity: EntityRow, label: string): NotFoundError {
  const name = entityLabel(entity);
  return new NotFoundError(`entity ${name} has no pinned memory block ${JSON.stringify(label)}`, {
    hint: `list its blocks with: mgpt memory ${name}`, code: 'no_memory_block', entityId: entity.id,
  });
}

function toBlock(r: MemoryRow): MemoryBlock {
  return { label: r.label, text: r.text, tokens: r.tokens, updated_at: r.updatedAt };
}
