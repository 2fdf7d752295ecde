/**
 * Pinned memory: named text blocks of an entity's head, in the wire's shapes, with the
 * rules every backend applies alike (labels, limits) and how the model is shown them.
 */

/** A block as GET /v1/entities/{id}/memory and its /{label} answer it. */
export interface MemoryBlock {
  label: string;
  text: string;
  tokens: number;
  updated_at: string;
}

export interface MemoryLimits {
  blocks: number;
  tokens: number;
}

/** GET /v1/entities/{id}/memory. */
export interface MemoryList {
  memory: MemoryBlock[];
  /** The blocks' tokens, summed (what the limit counts). */
  tokens: number;
  limits: MemoryLimits;
}

/** One change: `before` null for a new block, `after` null for a removed one. */
export interface MemoryChange {
  label: string;
  before: string | null;
  after: string | null;
  source: 'user' | 'model';
  created_at: string;
}

/** GET /v1/entities/{id}/memory?history=true. */
export interface MemoryHistory {
  history: MemoryChange[];
}

/** At most this many blocks, unless configured (engine.memoryBlocks). */
export const DEFAULT_MEMORY_BLOCKS = 16;
/** At most this many tokens in all blocks together, unless configured (engine.memoryTokens). */
export const DEFAULT_MEMORY_TOKENS = 2000;

/** A label: a letter or digit, then letters, digits, `_`, `-` or `.`; 64 characters at most. It goes in URLs as it is. */
export const MEMORY_LABEL = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The first line of the pinned memory message. */
export const PINNED_MEMORY_HEADING = 'Pinned memory:';

/**
 * The system message that shows the blocks to the model, right after the instructions: the
 * heading, then one `label: text` entry a block, by label. None without blocks: an entity without
 * pinned memory sends exactly the prompt it sent before.
 */
export function pinnedMemoryText(blocks: ReadonlyArray<{ label: string; text: string }>): string {
  if (!blocks.length) return '';
  return [PINNED_MEMORY_HEADING, ...blocks.map((b) => `${b.label}: ${b.text}`)].join('\n');
}
