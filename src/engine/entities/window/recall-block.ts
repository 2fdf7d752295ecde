
/**
 * Where automatic recall goes in the prompt: inside the user message of the turn that recalled it,
 * before the user's own text, and there it stays, byte for byte, in every later request until the
 * message is folded (docs/entities-and-memory.md#memory-past-the-window-recall). A request then only grows at
 * its end between rotations, so a prefix cache (llama.cpp, OpenAI, Anthropic) serves all of it
 * but the new turn; and the prompt keeps the one shape chat templates accept (a system message
 * between the turns is refused by Gemma's and Mistral's).
 */
export interface InViewRecall {
  /** The recall's text: the preamble, then the recalled lines. */
  text: string;
  /** Its estimated tokens in the prompt, the block's delimiters included. */
  tokens: number;
  /** The seqs of the recalled lines: while they are in view they are not recalled again. */
  seqs: number[];
  /** The text as a turn record keeps it (by reference to the transcript); set once the turn is stored. */
  stored?: unknown;
}

/**
 * Says what the recalled lines are, so the model reads them as memory, not as new messages. Short:
 * it stays in the prompt with its message, so every word of it counts in the window's budget.
 */
export const RECALL_PREAMBLE = 'Recalled from earlier in this conversation:';

/** The preamble of a recall that went as a system message of its own, before recall went inside the user message: turn records written then name it. */
export const SYSTEM_RECALL_PREAMBLE = 'Earlier in this conversation (recalled from the transcript; no longer in view):';

/** The delimiters around a user message's recalled lines; never change them (turn records rebuild prompts with them). */
const OPEN = '<recalled>\n';
const CLOSE = '\n</recalled>\n\n';

/** The delimiters', the preamble's and the line breaks' tokens, at most (o200k counts 17). */
export const RECALL_WRAP_TOKENS = 20;

/** A user message's text as the prompt shows it, after what its turn recalled. */
export function withRecall(content: string, recall: string): string {
  return OPEN + recall + CLOSE + content;
}

/** What a turn's retrieval puts in its user message. */
export function inViewRecall(found: { text: string; tokens: number; messages: ReadonlyArray<{ seq: number }> }): InViewRecall {
  return { text: `${RECALL_PREAMBLE}\n${found.text}`, tokens: found.tokens + RECALL_WRAP_TOKENS, seqs: found.messages.map((m) => m.seq) };
}

/** One user message's recall as a turn record keeps it: [its seq, tokens, recalled seqs, text by reference]. */
export type StoredRecall = [number, number, number[], unknown];

/** The form of a turn record's tail that lists the recall each live user message carries. */
export interface RecallTail {
  v: 2;
  recalls: StoredRecall[];
}

export function isRecallTail(tail: unknown): tail is RecallTail {
  return typeof tail === 'object' && tail !== null && !Array.isArray(tail) && (tail as { v?: unknown }).v === 2 && Array.isArray((tail as { recalls?: unknown }).recalls);
}

/** A record's tail for these recalls, by user seq. */
export function recallTail(recalls: ReadonlyMap<number, InViewRecall>): RecallTail {
  return { v: 2, recalls: [...recalls].map(([seq, r]): StoredRecall => [seq, r.tokens, r.seqs, r.stored]) };
}

