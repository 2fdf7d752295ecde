import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { type CliResult, cliEnv, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// SIGKILL `mgpt respond UNIVERSE TEXT --request-id R` at the step boundaries of a universe turn,
// then retry with the same R: exactly one user message and one reply are stored, and once a commit
// has completed the provider is not called again. The process is stopped at a boundary from the
// outside, with the database's own locks, so the binary runs unchanged:
// - "before the commit": the provider's reply has arrived, and the turn's final write is blocked
//   (SQLite: another connection holds the write lock; PostgreSQL: the log table is locked, which
//   the final write touches and the user message's write does not);
// - "after the commit": the reply is visible in the database.
const cluster = await startPostgres('the universe crash test on PostgreSQL');
afterAll(() => cluster?.stop());

const dir = tempDir('mgpt-respond-crash-');
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

/** What the test needs of a database: block the turn's last write, and read a universe's rows. */
interface Db {
  url: string;
  block(): Promise<void>;
  unblock(): Promise<void>;
  messages(universeId: string): Promise<Array<{ role: string; content: string | null }>>;
  close(): Promise<void>;
}

function sqliteDb(file: string): Db {
  let db: Database.Database | undefined;
  const open = () => (db ??= new Database(file, { timeout: 5000 }));
  return {
    url: file,
    block: async () => void open().exec('BEGIN IMMEDIATE'),
    unblock: async () => void open().exec('ROLLBACK'),
    messages: async (id) => open().prepare('SELECT role, content FROM universe_messages WHERE universe_id = ? ORDER BY seq').all(id) as never,
    close: async () => void db?.close(),
  };
}

function postgresDb(url: string): Db {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  return {
    url,
    block: async () => {
      await connected;
      await client.query('BEGIN');
      await client.query('LOCK TABLE generation_logs IN EXCLUSIVE MODE');
    },
    unblock: async () => void (await client.query('ROLLBACK')),
    messages: async (id) => {
      await connected;
      return (await client.query('SELECT role, content FROM universe_messages WHERE universe_id = $1 ORDER BY seq', [id])).rows;
    },
    close: () => client.end(),
  };
}

const stores: Array<[string, (home: string) => Db | null]> = [
  ['SQLite', (home) => sqliteDb(join(home, 'mgpt.db'))],
  ['PostgreSQL', () => (cluster ? postgresDb(cluster.createDatabase('crash')) : null)],
];

describe.each(stores)('a universe turn killed at a step boundary, on %s', (name, make) => {
  const home = join(dir, name);
  const db = make(home);
  const env = cliEnv(home, {
    MGPT_PROVIDER: 'openai',
    MGPT_PROVIDER_URL: '',
    MGPT_PROMPTS_DIR: join(dir, name, 'prompts'),
    ...(db ? { MGPT_DB: db.url } : {}),
    // The killed process's lease is the retry's only wait.
    MGPT_LEASE_TTL_MS: '600',
  });
  const run = (...args: string[]) => mgptBinary(args, env);
  let universe = '';
  beforeAll(async () => {
    if (!db) return;
    env.MGPT_PROVIDER_URL = fake.url;
    expect((await run('prompts', 'add', 'narrator', 'You narrate.')).code).toBe(0);
  });
  afterAll(() => db?.close());

  async function newUniverse(): Promise<string> {
    const r = await run('universes', 'create', '--prompt', 'narrator');
    expect(r.stderr).toBe('');
    return r.stdout.trim();
  }

  /** Retries until the dead process's lease has expired; the retry's result. */
  async function retry(args: string[]): Promise<CliResult> {
    const end = Date.now() + 10_000;
    for (;;) {
      const r = await run(...args);
      if (r.code !== 5 || Date.now() > end) return r;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  it.skipIf(!db)('killed after the provider replied, before the commit: the retry answers once and stores the turn once', async () => {
    universe = await newUniverse();
    let letGo!: () => void;
    fake.script({ text: ['the ', 'first ', 'answer'], holdAfterFirst: new Promise<void>((r) => (letGo = r)) });
    const args = ['respond', universe, 'hello', '--request-id', 'R1'];
    const before = fake.requests.length;
    const child = spawnMgpt(args, env);
    while (fake.requests.length === before) await new Promise((r) => setTimeout(r, 10));
    // The user message is stored (the provider was called after it); now block the last write.
    await db!.block();
    letGo();
    await new Promise((r) => setTimeout(r, 700));
    child.kill('SIGKILL');
    expect((await child.result).signal).toBe('SIGKILL');
    await db!.unblock();

    const r = await retry(args);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(fake.requests.length).toBe(before + 2);
    expect(await db!.messages(universe)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'reply: hello' },
    ]);
  });

  it.skipIf(!db)('killed after the commit: the retry replays the reply without calling the provider', async () => {
    universe = await newUniverse();
    const args = ['respond', universe, 'hello again', '--request-id', 'R2', '--json'];
    fake.script({ text: ['the ', 'only ', 'answer'], chunkDelayMs: 100 });
    const before = fake.requests.length;
    const child = spawnMgpt(args, env);
    const end = Date.now() + 15_000;
    while ((await db!.messages(universe)).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    await child.result;

    const r = await retry(args);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout).assistantRaw).toBe('the only answer');
    expect(fake.requests.length).toBe(before + 1);
    expect(await db!.messages(universe)).toEqual([
      { role: 'user', content: 'hello again' },
      { role: 'assistant', content: 'the only answer' },
    ]);
  });
});
