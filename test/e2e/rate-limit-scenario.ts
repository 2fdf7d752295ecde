import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { type CliResult, cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, HALF_CHAR_TOKENS, startFakeOpenAI } from '../helpers/fake-openai.js';

/**
 * Rate limits across two real `mgpt serve` processes on one database (a SQLite file, or a
 * PostgreSQL URL): one limit between them, 429s in each contract's shape with OpenAI's headers,
 * nothing stored for a refusal, and /metrics counting the refusals.
 */
export interface Served {
  url: string;
  stop: () => Promise<CliResult>;
}

export async function serve(env: Record<string, string>): Promise<Served> {
  const child = spawnMgpt(['serve', '--port', '0'], env);
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(String(d).trim()));
    void child.result.then((r) => reject(new Error(`mgpt serve exited early: ${r.stderr}`)));
  });
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      return child.result;
    },
  };
}

export interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** A new key of a new account, with the limits given as flags (`--rpm 5`). */
export async function keyFor(env: Record<string, string>, account: string, flags: string[] = []): Promise<string> {
  expect((await mgpt(['accounts', 'create', account], env)).code).toBe(0);
  const r = await mgpt(['keys', 'create', '--account', account, '--scopes', 'mgpt.responses:create', ...flags], env);
  expect(r.stderr).not.toMatch(/^error/m);
  return r.stdout.trim();
}

/** A refusal's headers as OpenAI sends them, for the limit that refused it. */
export function expectRefusal(a: Answer, kind: 'requests' | 'tokens', limit: number): void {
  expect(a.status).toBe(429);
  const retry = Number(a.headers.get('retry-after'));
  expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
  expect(a.headers.get(`x-ratelimit-limit-${kind}`)).toBe(String(limit));
  expect(a.headers.get(`x-ratelimit-remaining-${kind}`)).toBe('0');
  expect(a.headers.get(`x-ratelimit-reset-${kind}`)).toMatch(/^(\d+m)?[\d.]+m?s$/);
}

/** How many 429s the process's /metrics counts for one limit. */
export async function refusalsCounted(base: string, kind: 'requests' | 'tokens'): Promise<number> {
  const families = parsePrometheus(await (await fetch(`${base}/metrics`)).text());
  const hit = families.find((f) => f.name === 'mgpt_rate_limited_total')?.metrics.find((m) => m.labels?.limit === kind);
  return Number(hit?.value ?? 0);
}

export function envFor(dir: string, db: string): Record<string, string> {
  return cliEnv(dir, { MGPT_DB: db });
}

/** The acceptance of issue 23 for one database behind two `mgpt serve` processes. */
export function rateLimitsAcrossTwoServers(what: string, env: () => Record<string, string> | null): void {
  describe.skipIf(!env())(`rate limits across two mgpt serve processes on ${what}`, () => {
    let p: Served;
    let q: Served;
    const e = () => env()!;
    beforeAll(async () => {
      [p, q] = await Promise.all([serve(e()), serve(e())]);
    });
    afterAll(async () => {
      for (const s of [p, q]) expect((await s?.stop())?.code).toBe(0);
    });
    const entity = async (key: string) => (await call(p.url, key, 'POST', '/v1/entities', { model: 'mgpt-1-27b' })).body.id as string;
    const messages = async (key: string, id: string) => (await call(q.url, key, 'GET', `/v1/entities/${id}`)).body.transcript.messages as number;

    it('--rpm 5 admits exactly 5 turns between both, refuses the rest with the headers, stores nothing for them, and refills one every 12 s', async () => {
      const key = await keyFor(e(), 'rpm-team', ['--rpm', '5']);
      const ids = await Promise.all(Array.from({ length: 8 }, () => entity(key)));
      const answers = await Promise.all(ids.map((id, i) => call(i % 2 ? q.url : p.url, key, 'POST', `/v1/entities/${id}/messages`, { content: `turn ${i}`, stream: false })));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(ok).toHaveLength(5);
      expect(ok.map((a) => a.headers.get('x-ratelimit-remaining-requests')).sort()).toEqual(['0', '1', '2', '3', '4']);
      for (const a of ok) expect(a.headers.get('x-ratelimit-limit-requests')).toBe('5');
      for (const a of refused) {
        expectRefusal(a, 'requests', 5);
        expect(a.body).toEqual({ error: expect.stringMatching(/^rate limit reached for requests per minute \(rpm\): limit 5, remaining 0; try again in /) });
      }
      // Nothing stored for a refused turn: its entity has no messages; the admitted ones have two.
      const counts = await Promise.all(ids.map((id) => messages(key, id)));
      expect([...counts].sort()).toEqual([0, 0, 0, 2, 2, 2, 2, 2]);
      // Each contract refuses in its own shape, before reading the body.
      const facade = await call(q.url, key, 'POST', '/v1/chat/completions', { model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'hi' }] });
      expectRefusal(facade, 'requests', 5);
      expect(facade.body.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null, message: expect.stringMatching(/rate limit reached/) });
      const universe = await call(p.url, key, 'POST', '/api/mgpt/responses', { universe: 'u', userInput: 'hi' });
      expectRefusal(universe, 'requests', 5);
      expect(universe.body).toEqual({ detail: expect.stringMatching(/rate limit reached/) });
      // Reading is not a model request: never limited.
      expect((await call(q.url, key, 'GET', '/v1/entities')).status).toBe(200);
      // One request comes back every 60/5 s: after the wait a 429 asked for, exactly one more is admitted.
      await new Promise((r) => setTimeout(r, Number(universe.headers.get('retry-after')) * 1000));
      const after: Answer[] = [];
      for (const s of [q, p]) after.push(await call(s.url, key, 'POST', `/v1/entities/${ids[counts.indexOf(0)]}/messages`, { content: 'later', stream: false }));
      expect(after.map((a) => a.status)).toEqual([200, 429]);
      const counted = (await refusalsCounted(p.url, 'requests')) + (await refusalsCounted(q.url, 'requests'));
      expect(counted).toBe(refused.length + 2 + 1);
    }, 60_000);

    it("the account's --tpm refuses the next turn once a turn's billed tokens spent it; the streamed turn itself is never cut", async () => {
      const key = await keyFor(e(), 'tpm-team');
      expect((await call(p.url, key, 'GET', '/v1/entities')).status).toBe(200);
      expect((await mgpt(['accounts', 'update', 'tpm-team', '--tpm', '20'], e())).code).toBe(0);
      const id = await entity(key);
      const long = 'a message long enough that it and its echoed reply bill more than twenty tokens between them, surely';
      const streamed = await call(p.url, key, 'POST', `/v1/entities/${id}/messages`, { content: long });
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('x-ratelimit-limit-tokens')).toBe('20');
      expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(streamed.text).not.toContain('"error"');
      const next = await call(q.url, key, 'POST', `/v1/entities/${id}/messages`, { content: 'one more', stream: false });
      expectRefusal(next, 'tokens', 20);
      expect(next.body.error).toMatch(/^rate limit reached for tokens per minute \(tpm\): limit 20, remaining 0/);
      expect(await messages(key, id)).toBe(2);
      const facade = await call(p.url, key, 'POST', '/v1/chat/completions', { model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'hi' }] });
      expect(facade.body.error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded' });
      expect((await refusalsCounted(p.url, 'tokens')) + (await refusalsCounted(q.url, 'tokens'))).toBe(2);
    }, 60_000);
  });
}

/**
 * Issue 31, finding 3: a request was admitted while any of its key's token allowance was left, so
 * concurrent turns all got in (10 long streams at --tpm 1000 billed 30x the limit). Each now
 * reserves its message and its reply's bound before the model is called, in one conditional write
 * on the shared database, so together they bill at most the limit plus one request's reservation.
 */
export function tokenReservationsAcrossTwoServers(what: string, env: () => Record<string, string> | null, db: () => string): void {
  describe.skipIf(!env())(`token reservations across two mgpt serve processes on ${what}`, () => {
    let fake: FakeOpenAI;
    let servers: Served[] = [];
    beforeAll(async () => {
      fake = await startFakeOpenAI();
      // A model that honours max_tokens (cut at that many words), as real servers do, with a context big enough for anything here.
      fake.limit = { nCtx: 1_000_000, ...HALF_CHAR_TOKENS };
      // Long streams: 3,000 one-token words, a chunk each, a millisecond apart.
      fake.fallback = () => ({ text: 'word '.repeat(3000), chunkDelayMs: 1 });
      const provider = { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' };
      servers = await Promise.all([serve({ ...env()!, ...provider }), serve({ ...env()!, ...provider })]);
    });
    afterAll(async () => {
      for (const s of servers) expect((await s.stop()).code).toBe(0);
      await fake?.close();
    });

    it('10 concurrent long streams at --tpm 1000 bill at most the limit plus one reservation; the rest get 429 and store nothing', async () => {
      const key = await keyFor(env()!, 'tpm-burst', ['--tpm', '1000']);
      const url = (i: number) => servers[i % 2].url;
      const ids = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await call(url(i), key, 'POST', '/v1/entities', { model: 'mgpt-1-27b' })).body.id as string));
      const content = 'tell me the longest story you know';
      const answers = await Promise.all(ids.map((id, i) => call(url(i), key, 'POST', `/v1/entities/${id}/messages`, { content })));
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const a of ok) expect(a.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      for (const a of answers.filter((x) => x.status !== 200)) expectRefusal(a, 'tokens', 1000);
      const store = await openStore(db());
      try {
        const account = (await store.accounts.byName('tpm-burst'))!;
        const ledger = await store.accounts.ledger(account.id);
        const billed = ledger.reduce((n, r) => n + r.inputTokens + r.outputTokens, 0);
        const messageTokens = ledger[0].inputTokens;
        expect(ledger).toHaveLength(ok.length);
        // One reservation: the message and a reply of at most the limit.
        expect(billed).toBeLessThanOrEqual(1000 + messageTokens + 1000);
        expect(billed).toBeGreaterThan(1000);
      } finally {
        await store.close();
      }
      // No reply was longer than the key's tokens per minute: the model was asked for at most that.
      expect(fake.prompts.every((p) => p.maxTokens !== undefined && p.maxTokens <= 1000)).toBe(true);
      // The refused turns stored nothing.
      const counts = await Promise.all(ids.map(async (id) => (await call(url(0), key, 'GET', `/v1/entities/${id}`)).body.transcript.messages as number));
      expect(counts.filter((n) => n === 2)).toHaveLength(ok.length);
      expect(counts.filter((n) => n === 0)).toHaveLength(10 - ok.length);
    }, 90_000);
  });
}
