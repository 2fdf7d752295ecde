import { type PlannedBlock, windowTokens } from '../../../core/window-plan.js';
import type { ChatMessage } from '../../../providers/spec.js';
import type { BlockRow } from '../../../store/types.js';
import { type InViewRecall, withRecall } from './recall-block.js';

/**
 * An entity's window as turns plan from it, kept between turns by a long-lived process: its
 * token sum and its prompt messages are kept with the blocks, and a turn without a rotation
 * appends its two blocks in place, so a turn's cost does not grow with the window's size.
 * What a live user message's turn recalled travels with it (recall-block.ts): its text is in the
 * message's prompt and its tokens in the window's, until the message is folded.
 * Only the holder of the entity's lease changes it, and only after its commit (engine/entities/turn.ts).
 */
export class WindowState {
  private messages: ChatMessage[] | undefined;
  private messagesFor = '';
  private planned: PlannedBlock[] | undefined;

  private constructor(
    private readonly rows: BlockRow[],
    private sum: number,
    private readonly recalls: Map<number, InViewRecall>,
    private recallSum: number,
  ) {}

  /** Takes ownership of `blocks`; of `recalls`, those of the blocks' user messages are kept. */
  static of(blocks: BlockRow[], recalls?: ReadonlyMap<number, InViewRecall>): WindowState {
    const kept = new Map<number, InViewRecall>();
    let sum = 0;
    if (recalls?.size) {
      for (const b of blocks) {
        const r = b.kind === 'message' && b.role === 'user' ? recalls.get(b.coversFrom) : undefined;
        if (!r) continue;
        kept.set(b.coversFrom, r);
        sum += r.tokens;
      }
    }
    return new WindowState(blocks, windowTokens(blocks), kept, sum);
  }

  get blocks(): readonly BlockRow[] {
    return this.rows;
  }

  /** The blocks' token estimates, summed (the seed's window: recalled lines not included). */
  get tokens(): number {
    return this.sum;
  }

  /** The recalled lines the live user messages carry, in estimated tokens. */
  get recallTokens(): number {
    return this.recallSum;
  }

  /** What the live user messages carry, by their seq. */
  get recalled(): ReadonlyMap<number, InViewRecall> {
    return this.recalls;
  }

  /** The seqs of every recalled line still in view: recalling them again would repeat them. */
  inView(): Set<number> {
    const seqs = new Set<number>();
    for (const r of this.recalls.values()) for (const s of r.seqs) seqs.add(s);
    return seqs;
  }

  /** The blocks as rotation plans them: a user message's tokens with what it carries. */
  plannedBlocks(): readonly PlannedBlock[] {
    if (!this.recalls.size) return this.rows;
    this.planned ??= this.rows.map((b) => ({ ...b, tokens: b.tokens + (this.recallOf(b)?.tokens ?? 0) }));
    return this.planned;
  }

  /** The blocks as the prompt shows them: a user message's text after what its turn recalled. */
  rendered(): BlockRow[] {
    return this.rows.map((b) => {
      const r = this.recallOf(b);
      return r ? { ...b, content: withRecall(b.content, r.text), tokens: b.tokens + r.tokens } : b;
    });
  }

  /** Instructions first (never rotated, not a block), then the blocks in order, then the new message: a fresh array. */
  prompt(instructions: string, content: string): ChatMessage[] {
    if (!this.messages || this.messagesFor !== instructions) {
      this.messages = windowMessages(instructions, this.rendered());
      this.messagesFor = instructions;
    }
    const out = this.messages.slice();
    out.push({ role: 'user', content });
    return out;
  }

  /** A committed turn's blocks join the window (the version it is cached under changes with them), with what its user message recalled. */
  append(blocks: BlockRow[], recall?: InViewRecall): this {
    this.planned = undefined;
    for (const b of blocks) {
      const r = recall && b.kind === 'message' && b.role === 'user' ? recall : undefined;
      if (r) {
        this.recalls.set(b.coversFrom, r);
        this.recallSum += r.tokens;
      }
      this.rows.push(b);
      this.sum += b.tokens;
      this.messages?.push(blockMessage(b, r));
    }
    return this;
  }

  private recallOf(b: BlockRow): InViewRecall | undefined {
    return b.kind === 'message' && b.role === 'user' ? this.recalls.get(b.coversFrom) : undefined;
  }
}

/** The prompt a window makes: the instructions (a system message), then each block as a message. */
export function windowMessages(instructions: string, blocks: readonly BlockRow[]): ChatMessage[] {
  const out: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  for (const b of blocks) out.push(blockMessage(b));
  return out;
}

function blockMessage(b: BlockRow, recall?: InViewRecall): ChatMessage {
  if (b.kind === 'summary') return { role: 'system', content: b.content };
  if (b.role === 'user') return { role: 'user', content: recall ? withRecall(b.content, recall.text) : b.content };
  return { role: 'assistant', content: b.content };
}
