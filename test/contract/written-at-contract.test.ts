import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { collect as drain, contractTargets, useContractTarget } from './targets.js';

// A message dated by its caller (`at`): stored with that date, shown on its recalled line, and
// refused alike by the engine on every backend when the date is not one, lies ahead, or goes back.

const targets = await contractTargets('dated messages');

describe.each(targets)('written-at contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-written-at', name, make);
  const b = () => ctx.t.backend;
  const entity = async () => (await b().createEntity({ model: 'mgpt-1-27b', recall: 'off' })).id;
  const dates = async (id: string) => (await b().listMessages(id)).data.map((m) => [m.seq, m.created_at]);

  it('stores a dated message and its reply with the date (in UTC), and recall shows it on the line', async () => {
    const id = await entity();
    ctx.fake.script({ text: 'Congratulations on the talk!' });
    await drain(b().sendMessage(id, { content: 'Jon mentored me for my first conference talk.', at: '2024-05-07T10:00:00+02:00' }));
    expect(await dates(id)).toEqual([[1, '2024-05-07T08:00:00.000Z'], [2, '2024-05-07T08:00:00.000Z']]);
    // A date alone is its midnight UTC; an undated message after it is dated now.
    await drain(b().sendMessage(id, { content: 'Then we went hiking.', at: '2024-06-01' }));
    const before = Date.now();
    await drain(b().sendMessage(id, { content: 'And today I rest.' }));
    const all = await dates(id);
    expect(all[2]).toEqual([3, '2024-06-01T00:00:00.000Z']);
    expect(Date.parse(all[4]![1] as string)).toBeGreaterThanOrEqual(before - 1000);
    const recalled = await b().recall(id, { q: 'when did Jon mentor me?' });
    expect(recalled.text).toContain('#1 user (2024-05-07 08:00): Jon mentored me for my first conference talk.');
  });

  it('refuses a bad date with 400 and a hint, and stores nothing', async () => {
    const id = await entity();
    const cases: Array<[unknown, RegExp]> = [
      ['yesterday', /not an ISO 8601 time/],
      ['2024-05-07T10:00', /has no time zone/],
      ['2024-02-30', /not a date of the calendar/],
      [5, /at must be a string/],
      ['2999-01-01T00:00:00Z', /is in the future/],
    ];
    for (const [at, message] of cases) {
      const err = await drain(b().sendMessage(id, { content: 'hello', at: at as string })).catch((e: unknown) => e);
      expect(err, String(at)).toBeInstanceOf(BadRequestError);
      expect((err as Error).message).toMatch(message);
      // The hint is the engine's; a server's 400 carries the message (the remote backend's hint is the request id).
      if (ctx.t.kind === 'local') expect((err as BadRequestError).hint).toMatch(/2024-05-07T10:00:00Z|leave at out/);
    }
    expect((await b().getEntity(id)).transcript.messages).toBe(0);
  });

  it('keeps the transcript in the order it was written: a date before the latest message is refused, the same one is not', async () => {
    const id = await entity();
    await drain(b().sendMessage(id, { content: 'first', at: '2024-06-01T12:00:00Z' }));
    const err = await drain(b().sendMessage(id, { content: 'earlier', at: '2024-05-01T12:00:00Z' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toMatch(/before the entity's latest message \(#2, written 2024-06-01T12:00:00.000Z\)/);
    expect((await b().getEntity(id)).transcript.messages).toBe(2);
    await drain(b().sendMessage(id, { content: 'same moment', at: '2024-06-01T12:00:00Z' }));
    expect((await dates(id)).map(([, at]) => at)).toEqual(Array(4).fill('2024-06-01T12:00:00.000Z'));
  });
});
