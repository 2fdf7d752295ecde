import { BadRequestError } from '../../core/errors.js';
import { parseWrittenAt } from '../../core/wire/written-at.js';
import type { EntityRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import type { Clock } from '../support/clock.js';

/**
 * A message dated by its caller (docs/entities-and-memory.md#when-a-message-was-written): the
 * time it was written, never after it is sent (a clock ahead of the server's is refused too, not
 * moved), and never before the entity's latest message: a transcript reads in the order it was
 * written, which is what recall's dates, `mgpt window --at` and search's `since` rely on.
 */
export function writtenAtOf(value: unknown, clock: Clock): string {
  const at = parseWrittenAt(value);
  const now = clock.iso();
  if (at > now) {
    throw new BadRequestError(`at ${at} is in the future (it is ${now} here): a message cannot be dated after it is sent`, {
      hint: 'leave at out to date the message now; a remote server dates by its own clock',
    });
  }
  return at;
}

/** Under the turn's lease: the date is not before the entity's latest message (its reply, when it has one). */
export async function checkWrittenOrder(deps: Pick<EngineDeps, 'store'>, entity: EntityRow, at: string | undefined): Promise<void> {
  if (at === undefined || !entity.transcriptMessages) return;
  const [last] = await deps.store.entities.messagesAt(entity.id, [entity.transcriptMessages]);
  if (!last || at >= last.createdAt) return;
  throw new BadRequestError(`at ${at} is before the entity's latest message (#${last.seq}, written ${last.createdAt}): its messages are dated in the order they were written`, {
    hint: 'send dated messages oldest first; an older conversation goes in with mgpt import, which keeps its dates',
  });
}
