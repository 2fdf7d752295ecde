/**
 * The rows of an entity's window history: its rotations, and what each turn's prompt
 * was made of. Blocks lists are stored compactly (see engine/entities/window/block-refs.ts): a
 * summary as the number of the rotation that wrote it, messages as seq ranges, so the history
 * holds no second copy of the transcript.
 */
import type { BlockRow, LeaseSubject } from './rows.js';

/** What made a rotation: a turn that needed room, `mgpt rotate`, `mgpt rotate --resummarize`, or an import's fold. */
export type RotationTrigger = 'turn' | 'manual' | 'resummarize' | 'import';

export interface RotationRow {
  entityId: string;
  /** The rotation's number in its entity's history: 1, 2, 3… */
  n: number;
  id: string;
  createdAt: string;
  trigger: RotationTrigger;
  /** The user message of the turn that rotated; null for a manual rotation or a resummarize. */
  seq: number | null;
  /** The messages folded for the first time (an earlier summary folded in is not counted). */
  fromSeq: number;
  toSeq: number;
  /** The summary block: its id, the first seq it covers, its text and tokens. */
  summaryId: string;
  coversFrom: number;
  summaryText: string;
  summaryTokens: number;
  provider: string;
  model: string;
  promptTokens: number;
  cachedTokens: number | null;
  completionTokens: number;
  /** The whole window before and after, as block refs (JSON). */
  blocksBefore: string;
  blocksAfter: string;
  /** The ids of the message blocks folded, fromSeq first (JSON array). */
  foldedIds: string;
  undone: boolean;
}

/** What one turn's prompt was made of: its head (deduplicated per entity), its window, and what came after it. */
export interface TurnWindowRow {
  /** The user message's seq. */
  seq: number;
  /** The prompt's messages before the window (instructions, pinned memory), by their stored head's id. */
  headId: number;
  /** The window's blocks as block refs (JSON). */
  blocks: string;
  /** The messages between the window and the user message (a recall message), as JSON; null when none. */
  tail: string | null;
}

/** A turn's window record as the turn writes it: the head by content, stored once per entity. */
export interface TurnWindowWrite {
  seq: number;
  headSha256: string;
  /** The head's messages, as JSON. */
  head: string;
  blocks: string;
  tail: string | null;
}

/** A stored head: the prompt messages before a window, as JSON. */
export interface PromptHeadRow {
  id: number;
  sha256: string;
  messages: string;
}

/** An entity's whole window history, as export reads it and import writes it. */
export interface EntityHistory {
  rotations: RotationRow[];
  heads: PromptHeadRow[];
  turns: TurnWindowRow[];
}

/**
 * A steering action (`mgpt rotate`): the window rewritten whole, and its history record, in one
 * transaction that also frees the entity's lease.
 */
export interface SteerWrite {
  entityId: string;
  lease: { subject: LeaseSubject; owner: string };
  /** The window after the action, in order (positions are given here). */
  window: BlockRow[];
  windowTokens: number;
  updatedAt: string;
  /** A new record (a manual rotation or a resummarize). */
  insert?: RotationRow;
  /** The record an undo marks undone. */
  undo?: number;
}
