import {
  ENTITY_NAME_MAX,
  type UpdateEntityInput,
  WINDOW_BUDGET_MAX,
  WINDOW_BUDGET_MIN,
} from '../../core/wire/entity-types.js';
import { BadRequestError } from '../../core/errors.js';
import { RECALL_MODES, type RecallMode } from '../../core/text/recall-query.js';
import type { EntityRow, RecallModeCode } from '../../store/types.js';

/**
 * The rules of an entity's head, shared by create, update and the engine's own options, so that
 * the local backend and `mgpt serve` refuse exactly the same input with the same words.
 */

/** A display name: a string of at most 200 characters (docs/design.md#the-two-wire-contracts). */
export function checkName(value: unknown): string {
  if (typeof value !== 'string') throw new BadRequestError('name must be a string');
  const length = [...value].length;
  if (length > ENTITY_NAME_MAX) throw new BadRequestError(`name is ${length} characters; the limit is ${ENTITY_NAME_MAX}`);
  return value;
}

/** The standing system prompt: any string. */
export function checkInstructions(value: unknown): string {
  if (typeof value !== 'string') throw new BadRequestError('instructions must be a string');
  return value;
}

/** A recall mode: "auto", "tool" or "off"; true is "tool" and false "off", as before modes. */
export function checkRecall(value: unknown): RecallMode {
  if (value === true) return 'tool';
  if (value === false) return 'off';
  if (typeof value === 'string' && (RECALL_MODES as readonly string[]).includes(value)) return value as RecallMode;
  throw new BadRequestError(`recall must be "auto", "tool" or "off" (or true or false), got ${JSON.stringify(value)}`);
}

/** A recall mode as the store keeps it. */
export function recallCode(mode: RecallMode): RecallModeCode {
  return mode === 'auto' ? 2 : mode === 'tool' ? 1 : 0;
}

/** The store's recall code as a mode. */
export function recallModeOf(code: RecallModeCode | undefined): RecallMode {
  return code === 2 ? 'auto' : code === 1 ? 'tool' : 'off';
}

/** A window budget in tokens: an integer a rotation can work with. */
export function checkBudget(value: unknown, what = 'budget_tokens'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < WINDOW_BUDGET_MIN || value > WINDOW_BUDGET_MAX) {
    const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new BadRequestError(`${what} must be an integer from ${WINDOW_BUDGET_MIN} to ${WINDOW_BUDGET_MAX}, got ${shown}`);
  }
  return value;
}

/**
 * The most recalled lines a turn adds to the prompt: an integer from 1 to half the window budget
 * (recalled text sits in the prompt beside the window, so more than half would crowd out the
 * conversation it is recalled for).
 */
export function checkRecallTokens(value: unknown, budgetTokens: number): number {
  const most = Math.floor(budgetTokens / 2);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > most) {
    const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new BadRequestError(`recall_tokens must be an integer from 1 to ${most} (half of budget_tokens ${budgetTokens}), got ${shown}`, {
      hint: most < 1 ? 'raise the budget first' : undefined,
    });
  }
  return value;
}

/**
 * The entity's recall bound in effect: its own when set, else engine.recallTokens; never more
 * than half its budget (a budget lowered after the bound was set lowers it too).
 */
export function recallTokensOf(entity: Pick<EntityRow, 'recallTokens' | 'budgetTokens'>, engineRecallTokens: number): number {
  return Math.min(entity.recallTokens ?? engineRecallTokens, Math.floor(entity.budgetTokens / 2));
}

const CREATABLE = ['model', 'name', 'instructions', 'budget_tokens', 'cap_tokens', 'recall', 'recall_tokens', 'memory_tool'];

/** A create body is an object with no fields beyond the head's: what an update changes, and the model. */
export function checkCreateFields(input: unknown): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  const fields = input as Record<string, unknown>;
  // An undefined member is an absent one, as it is once sent as JSON.
  const extra = Object.keys(fields).filter((k) => fields[k] !== undefined && !CREATABLE.includes(k));
  if (extra.length) throw new BadRequestError(`unknown fields: ${extra.join(', ')}; a create takes ${CREATABLE.join(', ')}`);
}

/** Whether every turn offers the memory tool: a boolean. */
export function checkMemoryTool(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new BadRequestError(`memory_tool must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** A transcript cap as a field: a positive integer (what it must be above is the service's to say). */
export function checkCapField(cap: unknown): number {
  if (typeof cap !== 'number' || !Number.isSafeInteger(cap) || cap < 1) throw new BadRequestError(`cap_tokens must be a positive integer, got ${typeof cap === 'number' ? cap : JSON.stringify(cap)}`);
  return cap;
}

const UPDATABLE = ['name', 'instructions', 'budget_tokens', 'cap_tokens', 'recall', 'recall_tokens', 'memory_tool'] as const;

/** A PATCH body: an object with at least one updatable field, each valid, and nothing else. */
export function checkUpdate(input: unknown): UpdateEntityInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new BadRequestError('the update must be a JSON object');
  }
  const fields = input as Record<string, unknown>;
  // An undefined member is an absent one, as it is once sent as JSON: both backends see the same body.
  const present = Object.keys(fields).filter((k) => fields[k] !== undefined);
  if (present.includes('model')) {
    throw new BadRequestError('model cannot change: an entity keeps its model for life; create a new entity for another model');
  }
  const unknown = present.filter((k) => !(UPDATABLE as readonly string[]).includes(k));
  if (unknown.length) throw new BadRequestError(`unknown fields: ${unknown.join(', ')}; an update takes ${UPDATABLE.join(', ')}`);
  if (present.length === 0) throw new BadRequestError(`nothing to update: give at least one of ${UPDATABLE.join(', ')}`);
  const update: UpdateEntityInput = {};
  if (fields.name !== undefined) update.name = checkName(fields.name);
  if (fields.instructions !== undefined) update.instructions = checkInstructions(fields.instructions);
  if (fields.budget_tokens !== undefined) update.budget_tokens = checkBudget(fields.budget_tokens);
  if (fields.recall !== undefined) update.recall = checkRecall(fields.recall);
  if (fields.cap_tokens !== undefined) update.cap_tokens = checkCapField(fields.cap_tokens);
  if (fields.memory_tool !== undefined) update.memory_tool = checkMemoryTool(fields.memory_tool);
  // Its range depends on the budget (this update's or the stored one): checked by the service.
  if (fields.recall_tokens !== undefined) update.recall_tokens = fields.recall_tokens as number;
  return update;
}

/**
 * A new transcript cap for an entity holding `transcriptTokens`: above what it holds (at or
 * below, it would be read-only at once) and at most the highest the engine allows, which only
 * the operator raises (engine.maxTranscriptCap).
 */
export function checkCap(cap: number, transcriptTokens: number, max: number): number {
  // The reasons are in the message, not a hint: an HTTP answer carries the message to a remote CLI.
  if (cap > max) throw new BadRequestError(`cap_tokens ${cap} is over the highest this engine allows, ${max} (its operator can allow more: engine.maxTranscriptCap, MGPT_MAX_TRANSCRIPT_CAP)`);
  if (cap <= transcriptTokens) {
    throw new BadRequestError(`cap_tokens ${cap} is not above the ${transcriptTokens} tokens the transcript already holds: at or below them the entity would be read-only`);
  }
  return cap;
}
