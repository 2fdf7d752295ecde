import type { Context } from 'hono';
import type { ChunkEvent } from '../core/wire/completion-stream.js';
import type { TurnEvent } from '../core/wire/entity-types.js';
import type { Env } from './env.js';

/** A reply's last event (an entity turn's, or a reply told the same way): its usage, and the tokens it billed. */
type DoneEvent = Extract<TurnEvent | ChunkEvent, { type: 'done' }>;

/**
 * Notes a reply's tokens for the request log, and counts what it billed against its key's tokens
 * per minute before the reply ends: a client that reads the whole reply and asks again, of any
 * process or replica, is counted against them.
 */
export async function noteReply(c: Context<Env>, ev: DoneEvent): Promise<void> {
  c.set('tokens', { prompt: ev.completion.usage.prompt_tokens, completion: ev.completion.usage.completion_tokens });
  await settleTokens(c, ev.billed ?? 0);
}

/** Settles the request's token reservation to what its reply billed. The reply is stored by then: a failure to count it must not fail the reply. */
export async function settleTokens(c: Context<Env>, billed: number): Promise<void> {
  await c.get('allowance')?.settle(billed).catch(() => undefined);
}

/** A reply's events as they go out, noting its last one (`noteReply`) before it goes. */
export async function* notingReply<E extends TurnEvent | ChunkEvent>(c: Context<Env>, events: AsyncIterable<E>): AsyncGenerator<E> {
  for await (const ev of events) {
    const e: TurnEvent | ChunkEvent = ev;
    if (e.type === 'done') await noteReply(c, e);
    yield ev;
  }
}
