import { entityLabel } from '../../core/ref.js';
import { answering } from './turn-state.js';
import { routeOf } from '../generation/model-call.js';
import type { WindowBlock } from '../../core/wire/entity-types.js';
import { BadRequestError, CancelledError, ConflictError, ROTATION_CANCELLED } from '../../core/errors.js';
import type { RotateAction, RotateInput, RotateResult } from '../../core/wire/rotation-types.js';
import { providerModelProblem } from '../../core/models.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import { foldToExchange, planFoldToTarget } from '../../core/window-plan.js';
import type { ChatModel } from '../../providers/spec.js';
import type { BlockRow, EntityRow, RotationRow, SteerWrite } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { entitySubject, takeLease } from '../support/lease.js';
import { toBlock } from './entity-wire.js';
import { pinnedMemory } from './memory.js';
import { rotationRecords, rotationRow } from './rotations.js';
import { BlockEncoder, type BlockRef, blockRows, resolveBlocks } from './window/block-refs.js';
import { summarizeSpan } from './window/summarize.js';

const ACTIONS: readonly RotateAction[] = ['rotate', 'undo', 'resummarize'];

/** What one steering action writes, and the record it answers with. */
interface Step {
  write: Omit<SteerWrite, 'lease'>;
  record: RotationRow;
}

/** Checks a steering request the same way for every backend: an action, and a model only to resummarize. */
export function checkRotateInput(input: unknown): RotateInput {
  const i = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const extra = Object.keys(i).find((k) => k !== 'action' && k !== 'model');
  if (extra) throw new BadRequestError(`unknown field ${JSON.stringify(extra)}; a rotation request has action and model`);
  if (!ACTIONS.includes(i.action as RotateAction)) {
    throw new BadRequestError(`action must be one of ${ACTIONS.join(', ')}`, { hint: 'e.g. {"action":"undo"}' });
  }
  if (i.model !== undefined && (typeof i.model !== 'string' || i.model.trim() === '')) throw new BadRequestError('model must be a non-empty string');
  const problem = typeof i.model === 'string' ? providerModelProblem(i.model) : undefined;
  if (problem) throw new BadRequestError(`model ${quoted(i.model as string)} is not a provider model name: it ${problem}`, { hint: 'a model the entity\'s route serves, e.g. gpt-4o or gemma3:27b' });
  if (i.model !== undefined && i.action !== 'resummarize') throw new BadRequestError('model is only for resummarize', { hint: 'mgpt rotate ENTITY --resummarize --model NAME' });
  return { action: i.action as RotateAction, ...(i.model === undefined ? {} : { model: i.model as string }) };
}

/** A name as an error quotes it: its start only, so a 10 KB one does not fill the message. */
function quoted(name: string): string {
  return name.length > 40 ? `${JSON.stringify(name.slice(0, 40)).slice(0, -1)}…"` : JSON.stringify(name);
}

/**
 * One steering action as one unit of work under the entity's lease (409 while a turn holds it):
 * fold now, undo the last rotation, or write the newest summary again. The window is rewritten
 * whole, with the history record, in one transaction; a failure or a kill leaves it as it was.
 * Aborting `signal` (the caller's Ctrl-C, or its HTTP client gone) stops the summary call and
 * writes nothing: it is checked once more right before the write.
 */
export async function steerRotation(deps: EngineDeps, entity: EntityRow, input: RotateInput, signal?: AbortSignal): Promise<RotateResult> {
  try {
    return await steerLeased(deps, entity, input, signal);
  } catch (err) {
    if (signal?.aborted) throw rotationCancelled();
    throw err;
  }
}

async function steerLeased(deps: EngineDeps, entity: EntityRow, input: RotateInput, signal: AbortSignal | undefined): Promise<RotateResult> {
  const lease = await takeLease(deps, {
    subject: entitySubject(entity.id),
    refused: () => answering(entity),
  });
  try {
    // Read under the lease: no turn changes the window meanwhile.
    const window = await deps.store.entities.window(entity.id);
    const rows = await deps.store.history.rotations(entity.id);
    // The summary call stops on a cancel as on a lost lease.
    const stop = signal ? AbortSignal.any([lease.lost, signal]) : lease.lost;
    const step =
      input.action === 'rotate' ? await foldNow(deps, entity, window, rows, stop)
        : input.action === 'undo' ? await undoLast(deps, entity, window, rows)
          : await resummarize(deps, entity, window, rows, input.model, stop);
    const conflict = () => new ConflictError(`entity ${entityLabel(entity)}: the lease was lost before the rotation could be stored`, { hint: 'retry', entityId: entity.id });
    if (signal?.aborted) throw rotationCancelled();
    await lease.write((claim) => deps.store.history.steer({ ...step.write, lease: claim }), conflict, true);
    deps.windows.delete(entity.id);
    const all = [...rows.filter((r) => r.n !== step.record.n), step.record];
    const [rotation] = await rotationRecords(deps, entity.id, [step.record], all);
    const blocks = step.write.window.map(toBlock);
    return { action: input.action, rotation, window: { tokens: step.write.windowTokens, blocks } };
  } finally {
    await lease.release();
  }
}

/** `mgpt rotate`: folds the oldest blocks into a summary until the window is at the rotation target. */
async function foldNow(deps: EngineDeps, entity: EntityRow, window: BlockRow[], rows: RotationRow[], signal: AbortSignal): Promise<Step> {
  const take = foldCount(deps, entity, window);
  const folded = window.slice(0, take);
  if (!folded.some((b) => b.kind === 'message')) {
    throw new BadRequestError(`entity ${entityLabel(entity)} has no messages in its window to fold`, { hint: 'send a message first', entityId: entity.id });
  }
  const model = await deps.chatModel(entity.model);
  const text = await summaryOf(deps, entity, model, folded, signal);
  const last = folded[folded.length - 1];
  const summary: BlockRow = { id: deps.newId(), position: 1, kind: 'summary', role: 'system', ...text, coversFrom: folded[0].coversFrom, coversTo: last.coversTo };
  const after = [summary, ...window.slice(take)];
  const n = nextNumber(rows);
  const encoder = new BlockEncoder(deps, entity.id, { id: summary.id, content: summary.content, n });
  const record = await rotationRow(deps, encoder, {
    entityId: entity.id, n, trigger: 'manual', seq: null, summary, folded, toSeq: last.coversTo, before: window, after, model, usage: text.usage,
  });
  return { write: written(deps, entity, after.map(toBlock), { insert: record }), record };
}

/**
 * How many of the oldest blocks fold to bring the window to the rotation target (as a turn's
 * rotation does, with room for the summary); a window already there folds all but its last
 * exchange. A lone summary is never folded again.
 */
function foldCount(deps: EngineDeps, entity: EntityRow, window: BlockRow[]): number {
  // The live window starts with a question, as a turn's fold leaves it; a fold takes one message at least.
  const planned = planFoldToTarget(window, entity.budgetTokens, deps.limits.rotation)?.take ?? Math.max(0, window.length - 2);
  const first = window.findIndex((b) => b.kind === 'message');
  return foldToExchange(window, Math.max(planned, first + 1));
}

/** `--undo`: the window from before the last rotation not undone comes back, with what was added since; the record stays, marked undone. */
async function undoLast(deps: EngineDeps, entity: EntityRow, window: BlockRow[], rows: RotationRow[]): Promise<Step> {
  const last = [...rows].reverse().find((r) => !r.undone);
  if (!last) throw new BadRequestError(`entity ${entityLabel(entity)} has no rotation to undo`, { hint: `see its rotations: mgpt rotations ${entityLabel(entity)}`, entityId: entity.id });
  const [before, after] = await resolveBlocks(deps, entity.id, [refs(last.blocksBefore), refs(last.blocksAfter)], rows);
  const live = window.map(toBlock);
  const same = after.every((b, i) => live[i]?.id === b.id && live[i].content === b.content);
  if (!same) throw new ConflictError(`the window of entity ${entityLabel(entity)} changed since rotation ${last.n}; it cannot be undone`, { entityId: entity.id });
  const restored = [...before, ...live.slice(after.length)];
  return { write: written(deps, entity, restored, { undo: last.n }), record: { ...last, undone: true } };
}

/** `--resummarize`: the newest summary written again from the span it folded; only its text (and its record) change. */
async function resummarize(deps: EngineDeps, entity: EntityRow, window: BlockRow[], rows: RotationRow[], modelName: string | undefined, signal: AbortSignal): Promise<Step> {
  const current = window[0];
  const source = current?.kind === 'summary'
    ? [...rows].reverse().find((r) => !r.undone && r.trigger !== 'resummarize' && r.summaryId === current.id)
    : undefined;
  if (!current || current.kind !== 'summary') throw new BadRequestError(`entity ${entityLabel(entity)} has no summary in its window`, { hint: `fold first: mgpt rotate ${entityLabel(entity)}`, entityId: entity.id });
  if (!source) throw new BadRequestError(`the summary of entity ${entityLabel(entity)} was written before mgpt kept rotation history; its span is not known`, { hint: `fold again: mgpt rotate ${entityLabel(entity)}`, entityId: entity.id });
  const [before, after] = await resolveBlocks(deps, entity.id, [refs(source.blocksBefore), refs(source.blocksAfter)], rows);
  const folded = blockRows(before.slice(0, before.length - after.length + 1));
  const model = await deps.chatModel(entity.model, modelName);
  const text = await summaryOf(deps, entity, model, folded, signal);
  const summary: BlockRow = { ...current, content: text.content, tokens: text.tokens };
  const next = [summary, ...window.slice(1)];
  const n = nextNumber(rows);
  const encoder = new BlockEncoder(deps, entity.id, { id: summary.id, content: summary.content, n });
  const record = await rotationRow(deps, encoder, {
    entityId: entity.id, n, trigger: 'resummarize', seq: null, summary, folded: [], toSeq: source.toSeq, before: window, after: next, model, usage: text.usage,
  });
  record.fromSeq = source.fromSeq;
  return { write: written(deps, entity, next.map(toBlock), { insert: record }), record };
}

/** A summary of `span` by `model`, as long as a turn's rotation may write one. */
async function summaryOf(deps: EngineDeps, entity: EntityRow, model: ChatModel, span: readonly BlockRow[], signal: AbortSignal) {
  const tok = await loadTokenEstimator();
  // The instructions and pinned memory as the entity's turns send them, fitted as a turn fits them: the summary request starts with their prefix.
  const memory = await pinnedMemory(deps, entity.id);
  const fit = await deps.calibration.fit(model, entity.instructionsTokens + (memory?.tokens ?? 0), (entity.instructions ? 1 : 0) + (memory ? 1 : 0));
  const share = deps.limits.rotation.summary;
  const room = Math.floor(entity.budgetTokens * share);
  const max = fit.limit ? Math.min(room, Math.floor(fit.limit.cap * share)) : room;
  const instructions = { text: entity.instructions, tokens: entity.instructionsTokens, ...(memory ? { memory } : {}) };
  const { text, usage } = await summarizeSpan(routeOf(deps, model), tok, span, max, fit, deps.calibration, signal, instructions);
  return { content: text, tokens: tok.count(text), usage };
}

/** A steer its caller cancelled: nothing was written; the same error (and exit code) as a cancelled turn. */
function rotationCancelled(): CancelledError {
  return new CancelledError(ROTATION_CANCELLED);
}

function written(deps: EngineDeps, entity: EntityRow, blocks: WindowBlock[], extra: Pick<SteerWrite, 'insert' | 'undo'>): Omit<SteerWrite, 'lease'> {
  const window = blockRows(blocks);
  return { entityId: entity.id, window, windowTokens: window.reduce((n, b) => n + b.tokens, 0), updatedAt: deps.clock.iso(), ...extra };
}

function nextNumber(rows: RotationRow[]): number {
  return rows.length ? rows[rows.length - 1].n + 1 : 1;
}

function refs(json: string): BlockRef[] {
  return JSON.parse(json) as BlockRef[];
}
