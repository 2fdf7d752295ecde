import { windowTokens } from '../../../core/window-plan.js';
import type { ChatMessage } from '../../../providers/spec.js';
import type { BlockRow } from '../../../store/types.js';

/**
 * An entity's window as turns plan from it, kept between turns by a long-lived process: its
 * token sum and its prompt messages are kept with the blocks, and a turn without a rotation
 * appends its two blocks in place, so a turn's cost does not grow with the window's size.
 * Only the holder of the entity's lease changes it, and only after its commit (engine/entities/turn.ts).
 */
export class WindowState {
  private messages: ChatMessage[] | undefined;
  private messagesFor = '';

  private constructor(
    private readonly rows: BlockRow[],
    private sum: number,
  ) {}

  /** Takes ownership of `blocks`. */
  static of(blocks: BlockRow[]): WindowState {
    return new WindowState(blocks, windowTokens(blocks));
  }

  get blocks(): readonly BlockRow[] {
    return this.rows;
  }

  /** The blocks' token estimates, summed. */
  get tokens(): number {
    return this.sum;
  }

  /** Instructions first (never rotated, not a block), then the blocks in order, then the new message: a fresh array. */
  prompt(instructions: string, content: string): ChatMessage[] {
    if (!this.messages || this.messagesFor !== instructions) {
      this.messages = windowMessages(instructions, this.rows);
      this.messagesFor = instructions;
    }
    const out = this.messages.slice();
    out.push({ role: 'user', content });
    return out;
  }

  /** A committed turn's blocks join the window (the version it is cached under changes with them). */
  append(...blocks: BlockRow[]): this {
    for (const b of blocks) {
      this.rows.push(b);
      this.sum += b.tokens;
      this.messages?.push(blockMessage(b));
    }
    return this;
  }
}

/** The prompt a window makes: the instructions (a system message), then each block as a message. */
export function windowMessages(instructions: string, blocks: readonly BlockRow[]): ChatMessage[] {
  const out: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  for (const b of blocks) out.push(blockMessage(b));
  return out;
}

function blockMessage(b: BlockRow): ChatMessage {
  if (b.kind === 'summary') return { role: 'system', content: b.content };
  return { role: b.role === 'user' ? 'user' : 'assistant', content: b.content };
}
