import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { snapshot } from '../helpers/snapshot.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

describe('one writer per entity, across processes', () => {
  it('two processes send at once: one succeeds, the other exits 5', async () => {
    const env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    // A's reply is held open after its first chunk until B has finished, however slowly B starts.
    let bDone!: () => void;
    const held = new Promise<void>((r) => (bDone = r));
    fake.fallback = (body) => ({ text: `slow reply to ${body.messages.at(-1).content}`, holdAfterFirst: held });
    try {
      const a = spawnMgpt(['send', id, 'from A'], env);
      await new Promise<void>((r) => a.stdout!.once('data', () => r()));
      const b = await mgptBinary(['send', id, 'from B'], env);
      bDone();
      const ra = await a.result;
      expect(ra.code).toBe(0);
      expect(ra.stdout).toBe('slow reply to from A\n');
      expect(b.code).toBe(5);
      expect(b.stderr).toMatch(/^error: entity \S+ is answering another message/m);
      expect(b.stdout).toBe('');
    } finally {
      bDone();
      fake.fallback = (await import('../helpers/fake-openai.js')).echoLastUser;
    }
    expect(snapshot(env.MGPT_DB, id).transcript.map((m: any) => m.content)).toEqual(['from A', 'slow reply to from A']);
  });

  // The default TTL (15 s) is asserted in test/engine/entities.test.ts; here a short one set by
  // MGPT_LEASE_TTL_MS shows the expiry across processes without waiting it out.
  it('a lease left by a killed process expires within its TTL', async () => {
    const env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_DB: `${dir}/lease.db`, MGPT_LEASE_TTL_MS: '2000' });
    const id = (await mgpt(['entities', 'create'], env)).stdout.trim();
    fake.script({ text: 'never finished because the sender dies', chunkDelayMs: 200 });
    const a = spawnMgpt(['send', id, 'doomed'], env);
    await new Promise<void>((r) => a.stdout!.once('data', () => r()));
    a.kill('SIGKILL');
    await a.result;
    const killedAt = Date.now();
    const blocked = await mgpt(['send', id, 'too early'], env);
    expect(blocked.code).toBe(5);
    // Poll like a patient script would, until the dead writer's lease has expired.
    let ok;
    do {
      await new Promise((r) => setTimeout(r, 100));
      ok = await mgpt(['send', id, 'after expiry'], env);
    } while (ok.code === 5 && Date.now() - killedAt < 10_000);
    expect(ok).toMatchObject({ code: 0, stdout: 'reply: after expiry\n' });
    expect(Date.now() - killedAt).toBeLessThan(4_000);
    expect(snapshot(env.MGPT_DB, id).transcript.map((m: any) => m.content)).toEqual(['after expiry', 'reply: after expiry']);
  });
});

describe('one writer per universe, across processes', () => {
  it('three mgpt respond at once on one universe: one answers, the others exit 5 with one error line, nothing half-stored', async () => {
    const env = cliEnv(`${dir}/universe`, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROMPTS_DIR: `${dir}/universe/prompts` });
    expect((await mgpt(['prompts', 'add', 'narrator', 'You narrate.'], env)).code).toBe(0);
    const u = (await mgpt(['universes', 'create', '--prompt', 'narrator'], env)).stdout.trim();
    const before = fake.requests.length;
    fake.script({ text: 'the only answer', delayMs: 1500 });
    const first = spawnMgpt(['respond', u, 'first'], env);
    while (fake.requests.length === before) await new Promise((r) => setTimeout(r, 10));
    const others = await Promise.all([mgpt(['respond', u, 'second'], env), mgpt(['respond', u, 'third'], env)]);
    for (const r of others) {
      expect(r.code).toBe(5);
      expect(r.stderr).toMatch(/^error: universe \S+ is answering another request\nhint: /);
    }
    expect((await first.result).code).toBe(0);
    const doc = JSON.parse((await mgpt(['universes', 'show', u, '--json'], env)).stdout);
    expect(JSON.stringify(doc)).toContain('the only answer');
    expect(JSON.stringify(doc)).not.toMatch(/"second"|"third"/);
  });

  // Another process holding the file's write lock past busy_timeout (5 s) is what a loaded machine
  // does now and then to the loser of a contended turn (a slow commit): the loser saw SQLite's raw
  // "database is locked", exit 1, and behind mgpt serve a 500 its client retried, then exit 7.
  // Holding the lock here takes that path every time.
  describe('while another process holds the database write lock', () => {
    async function lockedUniverse(name: string) {
      const env = cliEnv(`${dir}/${name}`, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROMPTS_DIR: `${dir}/${name}/prompts` });
      expect((await mgpt(['prompts', 'add', 'narrator', 'You narrate.'], env)).code).toBe(0);
      const u = (await mgpt(['universes', 'create', '--prompt', 'narrator'], env)).stdout.trim();
      return { env, u };
    }

    /** Runs `body` while a connection of this process holds a write transaction open on the file. */
    async function holdingWriteLock<T>(file: string, body: () => Promise<T>): Promise<T> {
      const db = new Database(file);
      db.exec('BEGIN IMMEDIATE');
      try {
        return await body();
      } finally {
        db.exec('ROLLBACK');
        db.close();
      }
    }

    function expectBusyConflict(r: { code: number | null; stderr: string; stdout: string }) {
      expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 5, stderr: expect.stringMatching(/^error: the database is busy: another process held its write lock/m) });
      expect(r.stdout).toBe('');
    }

    it('mgpt respond exits 5 with a conflict, not a fault, and stores nothing', async () => {
      const { env, u } = await lockedUniverse('locked-local');
      const before = fake.requests.length;
      const r = await holdingWriteLock(env.MGPT_DB, () => mgptBinary(['respond', u, 'blocked'], env));
      expectBusyConflict(r);
      expect(r.stderr).toMatch(/^hint: retry in a moment/m);
      expect(fake.requests.length).toBe(before);
      expect(JSON.stringify(JSON.parse((await mgpt(['universes', 'show', u, '--json'], env)).stdout))).not.toContain('blocked');
    }, 30_000);

    it('behind mgpt serve: a 409 the client reports as exit 5, not a server error (exit 7)', async () => {
      const { env, u } = await lockedUniverse('locked-remote');
      const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
      const server = spawnMgpt(['serve', '--port', '0'], env);
      try {
        const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
        const client = cliEnv(`${dir}/locked-remote/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
        expectBusyConflict(await holdingWriteLock(env.MGPT_DB, () => mgptBinary(['respond', u, 'blocked'], client)));
      } finally {
        server.kill('SIGTERM');
        await server.result;
      }
    }, 60_000);
  });
});
