import { describe, expect, it } from 'vitest';
import { ContextOverflowError } from '../../src/core/errors.js';
import { SharedContextGates } from '../../src/engine/generation/shared-gate.js';
import { REPLIES_BEFORE_TRUSTED } from '../../src/engine/generation/reply-sizes.js';
import type { ChatModel, ChatRequest, StreamPart } from '../../src/providers/spec.js';

const CONTEXT = 2048;
const BOUND = 512;

/**
 * A model on a route whose 2,048-token context is shared: each request's reply is held open until
 * the test lets it end, with the length the test gives it; `running` counts the requests in flight.
 */
function heldModel() {
  const waiting: { end: (reply: { tokens: number; overflow?: boolean }) => void }[] = [];
  let running = 0;
  let most = 0;
  const model: ChatModel = {
    provider: 'test',
    modelId: 'held',
    routeKey: 'test:held',
    limits: {},
    async *stream(): AsyncGenerator<StreamPart> {
      running++;
      most = Math.max(most, running);
      try {
        const reply = await new Promise<{ tokens: number; overflow?: boolean }>((end) => waiting.push({ end }));
        if (reply.overflow) throw new ContextOverflowError('Context size has been exceeded.', { shared: true });
        yield { type: 'text-delta', text: 'x '.repeat(reply.tokens) };
        yield { type: 'usage', usage: { inputTokens: 40, outputTokens: reply.tokens } };
        yield { type: 'finish', reason: 'stop' };
      } finally {
        running--;
      }
    },
  };
  const calibration = { knownUnshared: () => false, sharedContext: async () => ({ contextTokens: CONTEXT, factor: 1 }) };
  const gated = new SharedContextGates(calibration).wrap(model);
  return {
    send: (r: ChatRequest = request()): Promise<void> => drain(gated.stream(r)),
    /** Ends `n` requests with `reply`, as they are let in. */
    end: async (n: number, reply: { tokens: number; overflow?: boolean }) => {
      for (let ended = 0; ended < n; ) {
        await until(() => waiting.length > 0);
        const now = waiting.splice(0, n - ended);
        for (const w of now) w.end(reply);
        ended += now.length;
      }
    },
    running: () => running,
    /** Waits for `n` requests to be in flight, and sees that no more are let in. */
    admitted: async (n: number) => {
      await until(() => running >= n);
      await settle();
      expect(running).toBe(n);
    },
    most: () => most,
    reset: () => (most = running),
  };
}

const request = (): ChatRequest => ({ messages: [{ role: 'user', content: 'Once upon a time a little dog found a ball.' }], maxTokens: BOUND, purpose: 'reply' });

async function drain(stream: AsyncIterable<StreamPart>): Promise<void> {
  for await (const _ of stream);
}

async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets the gate admit what it will: a few turns of the event loop. */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('the shared-context gate reserves what replies use', () => {
  it('reserves each reply its whole bound at first, then what recent replies used: more requests run at once', async () => {
    const m = heldModel();
    // First: 8 requests of ~60 prompt tokens and 512 of reply room on 1,945 usable tokens: 3 at a time.
    let sends = Array.from({ length: 8 }, () => m.send());
    await m.admitted(3);
    await m.end(8, { tokens: 60 });
    await Promise.all(sends);
    expect(m.most()).toBe(3);
    // Replies seen: enough of them, all 60 tokens long.
    sends = Array.from({ length: REPLIES_BEFORE_TRUSTED - 8 }, () => m.send());
    await m.end(REPLIES_BEFORE_TRUSTED - 8, { tokens: 60 });
    await Promise.all(sends);
    await until(() => m.running() === 0);
    // Now each holds its prompt and 60 tokens of reply room: all 8 run at once.
    m.reset();
    sends = Array.from({ length: 8 }, () => m.send());
    await m.admitted(8);
    await m.end(8, { tokens: 60 });
    await Promise.all(sends);
  });

  it('a reply longer than its reservation still streams whole and gives back what was held; overflows grow reservations back', async () => {
    const m = heldModel();
    const seen = Array.from({ length: 2 * REPLIES_BEFORE_TRUSTED }, () => m.send());
    await m.end(seen.length, { tokens: 60 });
    await Promise.all(seen);
    // One reply runs to 500 tokens, far past the ~60 reserved: nothing cuts it, and the gate empties after.
    const long = m.send();
    await m.end(1, { tokens: 500 });
    await long;
    expect(m.running()).toBe(0);
    // The shared context ran out under several: each counts as a reply that used its whole bound,
    // so the next requests reserve it again (3 at a time), until short replies are the rule again.
    const cut = Array.from({ length: 8 }, () => m.send().catch((err) => err));
    await m.admitted(8);
    await m.end(8, { tokens: 0, overflow: true });
    for (const err of await Promise.all(cut)) expect(err).toBeInstanceOf(ContextOverflowError);
    m.reset();
    const again = Array.from({ length: 8 }, () => m.send());
    await m.admitted(3);
    await m.end(8, { tokens: 60 });
    await Promise.all(again);
  });

  it('a request the shared context ran out on runs alone: it waits for those in flight, and none start beside it', async () => {
    const m = heldModel();
    const first = Array.from({ length: 2 }, () => m.send());
    await m.admitted(2);
    const retry = m.send({ ...request(), alone: true });
    const after = m.send();
    // The retry waits for both to end, and holds the whole context while it runs.
    await m.admitted(2);
    await m.end(2, { tokens: 60 });
    await Promise.all(first);
    await m.admitted(1);
    await m.end(1, { tokens: 60 });
    await retry;
    await m.admitted(1);
    await m.end(1, { tokens: 60 });
    await after;
  });
});
