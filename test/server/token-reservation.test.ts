import { describe, expect, it } from 'vitest';
import { servedFake } from '../helpers/served.js';

/**
 * Issue 31, finding 3: before a model is called, a request with a tokens-per-minute key reserves
 * its input and its reply's bound; the reservation is settled to what it billed, or returned when
 * the request fails. (Two processes on one database: test/e2e/rate-limits*.test.ts.)
 */
const served = servedFake({ narrator: true });

async function keyWithTpm(name: string, tpm: number): Promise<string> {
  await served.engine.accounts.create(name);
  return (await served.engine.keys.create(name, ['mgpt.responses:create'], { tpm })).key!;
}

async function post(key: string, path: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${served.server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hello there' }], ...extra });

describe('token reservations under --tpm (issue 31)', () => {
  it('asks the model for at most the key’s tokens per minute, and keeps a request’s own lower max_tokens', async () => {
    const key = await keyWithTpm('bounded', 1000);
    expect((await post(key, '/v1/chat/completions', chat('mgpt-1-27b'))).status).toBe(200);
    expect(served.fake.requests.at(-1)!.body.max_tokens).toBe(1000);
    expect((await post(key, '/v1/chat/completions', chat('mgpt-1-27b', { max_tokens: 50 }))).status).toBe(200);
    expect(served.fake.requests.at(-1)!.body.max_tokens).toBe(50);
    const e = await served.engine.entities.create({ model: 'mgpt-1-27b' }, (await served.engine.accounts.find('bounded')).id);
    expect((await post(key, `/v1/entities/${e.id}/messages`, { content: 'hi', stream: false })).status).toBe(200);
    expect(served.fake.requests.at(-1)!.body.max_tokens).toBeLessThanOrEqual(1000);
  });

  it('a second request while the first one’s reservation fills the minute gets 429 tokens, and nothing is billed for it', async () => {
    const key = await keyWithTpm('burst', 1000);
    let release!: () => void;
    served.fake.script({ text: ['first ', 'reply'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
    const first = post(key, '/v1/chat/completions', chat('mgpt-1-27b', { stream: true }));
    // The first is under way (its reply has started) when the second arrives.
    while (served.fake.firstTokenAt.length === 0 || served.fake.requests.at(-1)?.body.messages[0].content !== 'hello there') await new Promise((r) => setTimeout(r, 5));
    const before = served.fake.requests.length;
    const second = await post(key, '/v1/chat/completions', chat('mgpt-1-27b'));
    expect(second.status).toBe(429);
    expect(JSON.parse(second.text).error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded' });
    expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(served.fake.requests.length).toBe(before);
    release();
    expect((await first).status).toBe(200);
    expect(await served.engine.store.accounts.ledger((await served.engine.accounts.find('burst')).id)).toHaveLength(1);
  });

  it('a request whose provider fails returns its reservation: the next one is admitted', async () => {
    const key = await keyWithTpm('failing', 1000);
    served.fake.script({ status: 500, body: '{"error":{"message":"boom"}}' });
    const failed = await post(key, '/v1/chat/completions', chat('mgpt-1-27b'));
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // Without the return, the failed request's reservation (its prompt and 1,000 reply tokens) would fill the minute.
    const next = await post(key, '/v1/chat/completions', chat('mgpt-1-27b'));
    expect(next.status).toBe(200);
    expect(Number(next.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(990);
  });

  it('a universe turn reserves too: refused while another one’s reservation fills the minute, with nothing stored', async () => {
    const key = await keyWithTpm('worlds', 100);
    const userId = (await served.engine.accounts.find('worlds')).userId;
    const created = async () => ((await served.engine.universes.create({ storedPrompt: 'narrator' }, userId)) as { universe: string }).universe;
    const [held, other] = [await created(), await created()];
    let release!: () => void;
    const started = served.fake.firstTokenAt.length;
    served.fake.script({ text: ['the ', 'room'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
    const first = post(key, '/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: held, userInput: 'look around' });
    while (served.fake.firstTokenAt.length === started) await new Promise((r) => setTimeout(r, 5));
    expect(served.fake.requests.at(-1)!.body.max_tokens).toBe(100);
    const refused = await post(key, '/api/mgpt/responses', { model: 'game-1-lite-frozen', universe: other, userInput: 'and me' });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text)).toEqual({ detail: expect.stringMatching(/tokens per minute/) });
    expect(await served.engine.store.universes.messages(other)).toEqual([]);
    release();
    expect((await first).status).toBe(200);
  });
});
