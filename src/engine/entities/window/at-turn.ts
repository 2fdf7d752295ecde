import type { EntityWindowAt } from '../../../core/wire/rotation-types.js';
import { BadRequestError, NotFoundError } from '../../../core/errors.js';
import type { ChatMessage } from '../../../providers/spec.js';
import type { EntityRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import { type BlockRef, blockRows, resolveBlocks } from './block-refs.js';
import { WindowState, windowMessages } from './window-state.js';
import { type RecallTail, isRecallTail, withRecall } from './recall-block.js';
import { recallsOf } from './load-window.js';
import { shapeMessages } from '../../../core/request-shape.js';
import type { BlockRow } from '../../../store/types.js';
import { decodeTail } from './text-refs.js';
import { ZONED_DATE_HINT, parseZonedDate } from '../../support/zoned-date.js';

/**
 * The window the model saw when it answered the message at `at`: a seq (the user message, or its
 * reply) or a date (the last turn stored by then). The prompt is given back as it was sent, from
 * the turn's record; a turn stored before records were kept says it cannot be rebuilt.
 */
export async function windowAt(deps: EngineDeps, entity: EntityRow, at: string): Promise<EntityWindowAt> {
  const seq = await userSeq(deps, entity, at);
  const record = await deps.store.history.turnWindow(entity.id, seq);
  if (!record) {
    throw new NotFoundError(`the window of the turn at seq ${seq} cannot be rebuilt: that turn was stored before mgpt recorded each turn's window`, {
      hint: `windows are recorded for turns from now on; the current one: mgpt window ${entity.id}`,
    });
  }
  const [blocks] = await resolveBlocks(deps, entity.id, [JSON.parse(record.blocks) as BlockRef[]]);
  const [user] = await deps.store.entities.messagesAt(entity.id, [seq]);
  const head = JSON.parse(record.head) as ChatMessage[];
  const tail = record.tail ? (JSON.parse(record.tail) as unknown) : null;
  const prompt = isRecallTail(tail)
    ? await shapedPrompt(deps, entity.id, head, blockRows(blocks), tail, user.content, seq)
    : [
        ...head,
        ...windowMessages('', blockRows(blocks)),
        ...(Array.isArray(tail) ? await decodeTail(deps, entity.id, tail) : []),
        { role: 'user' as const, content: user.content },
      ];
  return { entity_id: entity.id, object: 'entity.window', seq, tokens: blocks.reduce((n, b) => n + b.tokens, 0), blocks, prompt };
}

/**
 * A prompt recorded with its recall by user message: the system message as sent, the live
 * messages (each user message after what its turn recalled), then the turn's own message, in the
 * one request shape. A record before then kept the prompt as it was built (the branch above).
 */
async function shapedPrompt(deps: EngineDeps, entityId: string, head: ChatMessage[], blocks: BlockRow[], tail: RecallTail, content: string, seq: number): Promise<ChatMessage[]> {
  const recalls = await recallsOf(deps, entityId, tail);
  const live = WindowState.of(blocks.filter((b) => b.kind === 'message'), recalls);
  const own = recalls.get(seq);
  return shapeMessages([...head, ...live.prompt('', own ? withRecall(content, own.text) : content)]);
}

/** The user message `at` names: a seq of the transcript (a reply's seq means its turn), or the last one stored by a date. */
async function userSeq(deps: EngineDeps, entity: EntityRow, at: string): Promise<number> {
  const last = entity.transcriptMessages;
  if (/^\d+$/.test(at.trim())) {
    const seq = Number(at.trim());
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > last) {
      throw new BadRequestError(`at ${at} is not a seq of this transcript (1 to ${last})`, { hint: 'list the transcript with: mgpt history ENTITY' });
    }
    return seq % 2 === 0 ? seq - 1 : seq;
  }
  const time = parseZonedDate(at.trim());
  if (time === undefined) throw new BadRequestError(`at must be a seq or a date with a zone, not ${JSON.stringify(at)}`, { hint: `e.g. --at 12 or --at 2026-11-26T10:00:00Z; ${ZONED_DATE_HINT}` });
  const seq = await deps.store.history.seqAt(entity.id, new Date(time).toISOString());
  if (seq === undefined) throw new BadRequestError(`no turn of this entity was stored by ${new Date(time).toISOString()}`, { hint: 'give a later date, or a seq' });
  return seq;
}
