/** The wire shapes of an entity's window history: rotations, steering, the window at a turn. */
import type { EntityWindow, RecalledLine, WindowBlock } from './entity-types.js';
import type { ChatMessage } from '../chat.js';

/** One rotation as `GET /v1/entities/{id}/rotations` lists it. */
export interface RotationRecord {
  id: string;
  created_at: string;
  trigger: 'turn' | 'manual' | 'resummarize' | 'import';
  /** The user message of the turn that rotated; null for `mgpt rotate` and `--resummarize`. */
  seq: number | null;
  /** The messages this rotation folded (an earlier summary it folded in is not counted again). */
  from_seq: number;
  to_seq: number;
  summary: { text: string; tokens: number };
  route: { provider: string; model: string };
  usage: { prompt_tokens: number; cached_tokens: number | null; completion_tokens: number };
  /** The whole window before and after, as the window route shows blocks. */
  blocks_before: WindowBlock[];
  blocks_after: WindowBlock[];
  undone: boolean;
}

export interface RotationList {
  rotations: RotationRecord[];
}

export type RotateAction = 'rotate' | 'undo' | 'resummarize';

/** `POST /v1/entities/{id}/rotations`: fold now, undo the last rotation, or write the newest summary again. */
export interface RotateInput {
  action: RotateAction;
  /** For `resummarize`: the model that writes the summary (the entity's route, with this provider model). */
  model?: string;
}

/** What a steering action did: its record, and the window after it. */
export interface RotateResult {
  action: RotateAction;
  rotation: RotationRecord;
  window: { tokens: number; blocks: WindowBlock[] };
}

/** `GET /v1/entities/{id}/window?at=SEQ`: the window the model saw when it answered the message at `seq`. */
export interface EntityWindowAt {
  entity_id: string;
  object: 'entity.window';
  /** The user message the turn answered. */
  seq: number;
  tokens: number;
  blocks: WindowBlock[];
  /** The prompt as it was sent, message for message: the head (instructions…), the blocks, anything after them, the message. */
  prompt: ChatMessage[];
}

/** One part of the next request and its estimated tokens; `blocks` counts what it is made of. */
export interface PromptPart {
  tokens: number;
  blocks: number;
}

/**
 * `GET /v1/entities/{id}/window?prompt=true` (an extension): the seed's window, and every part of
 * the request the next turn sends before its new message, with their tokens, and that request's
 * messages exactly as the provider gets them.
 */
export interface EntityWindowPrompt extends EntityWindow {
  /** The parts summed: what the next request carries before its new message. */
  prompt_tokens: number;
  parts: {
    instructions: PromptPart;
    memory: PromptPart;
    summaries: PromptPart;
    messages: PromptPart;
    /** Lines earlier turns recalled that the request still carries (their text as it carries it). */
    recalled: PromptPart & { lines: RecalledLine[] };
  };
  /** The provider messages up to the next turn's new message (which follows them). */
  prompt: ChatMessage[];
}
