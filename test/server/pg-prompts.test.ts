import { type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, cliEnv, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

// Issue 34, item 7: two real `mgpt serve` replicas on one PostgreSQL, each with a prompts directory
// of its own (as two machines would have), create universes from one set of stored prompts: the
// set lives in the database (docs/design.md#stored-prompts).
const cluster = await startPostgres('stored prompts across two mgpt serve replicas');
afterAll(() => cluster?.stop());

type Replica = ChildProcess & { result: Promise<CliResult>; url: string };

// Skipped only where no PostgreSQL server can be started here: startPostgres() prints a banner saying
// so, and under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead, so CI always runs it.
describe.skipIf(!cluster)('stored prompts on two replicas of one PostgreSQL', () => {
  const dir = tempDir('mgpt-pg-prompts-');
  const dirs = [join(dir, 'prompts-a'), join(dir, 'prompts-b')];
  const env = (i: number) => cliEnv(join(dir, `host-${i}`), { MGPT_DB: cluster?.url ?? '', MGPT_PROMPTS_DIR: dirs[i] });
  let replicas: Replica[] = [];
  let key = '';

  function serve(i: number): Promise<Replica> {
    const child = spawnMgpt(['serve', '--port', '0'], env(i));
    return new Promise((resolve, reject) => {
      child.stdout!.once('data', (d) => resolve(Object.assign(child, { url: String(d).trim() })));
      child.once('exit', (code) => reject(new Error(`mgpt serve exited ${code}`)));
    });
  }

  async function createUniverse(r: Replica, storedPrompt: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${r.url}/api/mgpt/universes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ storedPrompt }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    for (const d of dirs) mkdirSync(d, { recursive: true });
    // Only replica A's directory holds narrator.md: B's machine never had it.
    writeFileSync(join(dirs[0], 'narrator.md'), '---\nadditionalInstructions: Be brief.\n---\nYou narrate.\n');
    key = (await mgptBinary(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env(0))).stdout.trim();
    replicas = await Promise.all([serve(0), serve(1)]);
  }, 60_000);
  afterAll(async () => {
    for (const r of replicas) r.kill('SIGTERM');
    await Promise.all(replicas.map((r) => r.result));
  });

  it("a prompt in one replica's directory is imported when it starts, and the other creates universes from it", async () => {
    const made = await createUniverse(replicas[1], 'narrator');
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const listed = JSON.parse((await mgptBinary(['prompts', 'list', '--json'], env(1))).stdout);
    expect(listed.data.map((p: { name: string }) => p.name)).toEqual(['narrator']);
  });

  it('a prompt added on one host is on every replica at once; a removed one is gone from all, though its file stays', async () => {
    const added = await mgptBinary(['prompts', 'add', 'quest', 'You run quests.'], env(1));
    expect(added.code, added.stderr).toBe(0);
    expect((await createUniverse(replicas[0], 'quest')).status).toBe(201);

    const removed = await mgptBinary(['prompts', 'rm', 'narrator'], env(1));
    expect([removed.code, removed.stderr]).toEqual([0, 'removed stored prompt narrator\n']);
    for (const r of replicas) {
      const refused = await createUniverse(r, 'narrator');
      expect(refused.status).toBe(404);
      expect(refused.body.detail).toMatch(/no stored prompt named "narrator"/);
    }
    // A's file is still there, and a restart of A does not bring the removed prompt back.
    replicas[0].kill('SIGTERM');
    await replicas[0].result;
    replicas[0] = await serve(0);
    expect((await createUniverse(replicas[1], 'narrator')).status).toBe(404);
    // An explicit add does.
    expect((await mgptBinary(['prompts', 'add', 'narrator', '-f', join(dirs[0], 'narrator.md')], env(0))).code).toBe(0);
    expect((await createUniverse(replicas[1], 'narrator')).status).toBe(201);
  }, 60_000);
});
