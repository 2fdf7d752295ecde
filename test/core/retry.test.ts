import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/core/errors.js';
import { parseRetryAfter, retryDelay, shouldRetry, sleep } from '../../src/core/retry.js';

describe('the retry policy', () => {
  it('repeats 408 and 429 always, 5xx and connection errors only when idempotent, a refused connection always', () => {
    const idem = { idempotent: true };
    const create = { idempotent: false };
    for (const status of [408, 429]) expect([shouldRetry({ status }, idem), shouldRetry({ status }, create)]).toEqual([true, true]);
    expect([shouldRetry({ status: 503 }, idem), shouldRetry({ status: 503 }, create)]).toEqual([true, false]);
    for (const status of [400, 401, 404, 409, 413]) expect(shouldRetry({ status }, idem)).toBe(false);
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect([shouldRetry({ error: reset }, idem), shouldRetry({ error: reset }, create)]).toEqual([true, false]);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect([shouldRetry({ error: refused }, idem), shouldRetry({ error: refused }, create)]).toEqual([true, true]);
    expect(shouldRetry({ error: new Error('boom') }, idem)).toBe(false);
  });

  it('reads Retry-After as seconds or an HTTP date, and bounds the wait', () => {
    const now = Date.parse('2026-11-23T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    const opts = { maxRetries: 2, baseMs: 100, maxDelayMs: 10_000 };
    expect([retryDelay(0, opts), retryDelay(2, opts)]).toEqual([100, 400]);
    expect(retryDelay(0, opts, '3', now)).toBe(3000);
    expect(retryDelay(0, opts, '3600', now)).toBeUndefined();
    expect(retryDelay(20, opts)).toBe(10_000);
  });

  it('sleep ends with CancelledError on abort', async () => {
    const abort = new AbortController();
    const p = sleep(60_000, abort.signal);
    abort.abort();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
  });
});
