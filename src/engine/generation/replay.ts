import type { EntityCompletion } from '../../core/wire/entity-types.js';

/**
 * A stored completion told again as the events of its first answer: its start, its text, its end.
 * Entity turns and stateless completions replay an idempotency key's answer through it.
 */
export function* replayEvents<Start extends { type: 'start' }, Done extends { type: 'done' }>(
  start: Start,
  completion: Pick<EntityCompletion, 'choices'>,
  done: Done,
): Generator<Start | { type: 'delta'; text: string } | Done> {
  yield start;
  const text = completion.choices[0]?.message.content ?? '';
  if (text) yield { type: 'delta', text };
  yield done;
}
