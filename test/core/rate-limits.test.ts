import { describe, expect, it } from 'vitest';
import { durationText } from '../../src/core/rate-limits.js';
import { makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

describe('durationText (x-ratelimit-reset-*, as OpenAI writes it)', () => {
  it('writes milliseconds, seconds, minutes and hours as Go does', () => {
    expect(durationText(0)).toBe('0ms');
    expect(durationText(20.2)).toBe('21ms');
    expect(durationText(1500)).toBe('1.5s');
    expect(durationText(12_000)).toBe('12s');
    expect(durationText(59_996)).toBe('1m0s');
    expect(durationText(360_000)).toBe('6m0s');
    expect(durationText(103_980)).toBe('1m43.98s');
    expect(durationText(3_723_000)).toBe('1h2m3s');
  });
});

describe('rate limits in the engine', () => {
  const dir = tempDir('mgpt-rate-engine-');

  it("a key's own limit wins over its account's default; none falls back to it; both apply to the next authentication", async () => {
    const engine = makeEngine(dir);
    const account = await engine.accounts.create('team');
    const { key, id } = await engine.keys.create('team', ['mgpt.responses:create'], { tpm: 500 });
    await engine.accounts.update(account.id, { rpm: 10, tpm: 100 });
    expect((await engine.keys.authenticate(key)).limits).toEqual({ rpm: 10, tpm: 500 });
    await engine.keys.update(id, { tpm: null, rpm: 3 });
    expect((await engine.keys.authenticate(key)).limits).toEqual({ rpm: 3, tpm: 100 });
    const p = await engine.keys.authenticate(key);
    for (let i = 0; i < 3; i++) expect((await engine.rateLimits.admit(p))!.requests!.remaining).toBe(2 - i);
    await expect(engine.rateLimits.admit(p)).rejects.toMatchObject({ status: 429, limit: 'requests' });
    engine.close();
  });

  it('refuses a limit that is not a positive whole number, and changes nothing', async () => {
    const engine = makeEngine(dir);
    const { id } = await engine.keys.create('local', ['mgpt.responses:create'], { rpm: 7 });
    for (const bad of [0, -1, 1.5, Number.NaN, 2e9]) {
      await expect(engine.keys.update(id, { rpm: bad })).rejects.toMatchObject({ status: 400 });
      await expect(engine.accounts.update('local', { tpm: bad })).rejects.toMatchObject({ status: 400 });
    }
    expect((await engine.keys.list()).find((k) => k.id === id)).toMatchObject({ rpm: 7, tpm: null });
    expect(await engine.accounts.find('local')).toMatchObject({ rpm: null, tpm: null });
    engine.close();
  });
});

describe('a refusal read back a moment later', () => {
  it('names a limit the key has, even when the wait ran out between the refusal and the read (a PostgreSQL race under load)', async () => {
    const { RateLimitService } = await import('../../src/engine/platform/rate-limits.js');
    const { NO_EVENTS } = await import('../../src/engine/events.js');
    // The upsert refused at its now; the state read after it is from a later now, past the wait.
    const store = { rates: { admit: async () => ({ admitted: false, now: 10_000, requestTat: 9_000, tokenTat: 0 }), spend: async () => undefined } };
    const service = new RateLimitService({ store, events: NO_EVENTS } as never);
    const principal = { keyId: 'key_1', accountId: 'a', userId: 'u', scopes: [], limits: { rpm: 600, tpm: null } };
    await expect(service.admit(principal)).rejects.toMatchObject({ status: 429, limit: 'requests', retryAfterMs: 0, rate: { requests: { limit: 600 } } });
    const tokensOnly = { ...principal, keyId: 'key_2', limits: { rpm: null, tpm: 1000 } };
    await expect(service.admit(tokensOnly)).rejects.toMatchObject({ status: 429, limit: 'tokens', rate: { tokens: { limit: 1000 } } });
  });
});
