import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchKey, jobKey, parseJobs } from '../../src/cli/batch-jobs.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-batch-');
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

const lines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

async function transcript(env: Record<string, string>, id: string): Promise<string[]> {
  const r = await mgpt(['history', id, '--all', '--json'], env);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).data.map((m: { content: string }) => m.content);
}

describe('batch jobs file', () => {
  it('rejects a bad file with every problem listed, before anything runs', () => {
    expect(() => parseJobs('{"id":"a","entity":"x","input":"hi"}\n{"id":"a","entity":"x","input":"again"}\nnope\n{"id":"b","entity":"x","universe":"u","input":"x"}\n{"id":"c","newEntity":{"colour":"red"},"input":"x"}\n{"id":"d/e","entity":"x","input":"x"}\n{"id":"f","entity":"x","input":""}')).toThrow(
      /6 bad lines; nothing was run:\n {2}line 2 \(a\): id a appears twice\n {2}line 3: not JSON\n {2}line 4 \(b\): give exactly one of entity, universe, newEntity\n {2}line 5 \(c\): newEntity.colour is not a field\n {2}line 6 \(d\/e\): id must be/,
    );
    expect(() => parseJobs('\n\n')).toThrow('the batch has no jobs');
    const key = batchKey({ path: '/tmp/a.jsonl', content: 'x' });
    expect(key).toBe(batchKey({ path: '/tmp/a.jsonl', content: 'changed' }));
    expect(key).not.toBe(batchKey({ content: 'x' }));
    expect(jobKey(key, parseJobs('{"id":"q1","entity":"x","input":"hi"}')[0])).toBe(`batch-${key}-q1`);
  });

  it('a bad file exits 2 and sends nothing', async () => {
    const env = cliEnv(join(dir, 'bad'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
    const before = fake.requests.length;
    const r = await mgpt(['batch', '-'], env, '{"id":"a","entity":"x","input":"hi"}\n{"id":"b"}\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('line 2 (b): give exactly one of entity, universe, newEntity');
    expect(r.stdout).toBe('');
    expect(fake.requests.length).toBe(before);
    const unwritable = await mgpt(['batch', '-', '-o', join(dir, 'no', 'such', 'dir', 'out.jsonl')], env, '{"id":"a","newEntity":{},"input":"hi"}');
    expect([unwritable.code, unwritable.stderr]).toEqual([2, expect.stringContaining('cannot write')]);
    expect(JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data).toEqual([]);
    expect(fake.requests.length).toBe(before);
  });
});

describe('mgpt batch', () => {
  it('a run killed halfway and run again produces every reply exactly once', async () => {
    // The killed run's leases block its entities until they expire; a short TTL keeps the test quick
    // (the re-run waits for them: that is part of what is tested).
    const env = cliEnv(join(dir, 'resume'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model', MGPT_LEASE_TTL_MS: '1500' });
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await mgpt(['entities', 'create', '--name', name], env)).stdout.trim());
    const jobs: string[] = [];
    for (let i = 0; i < 24; i++) {
      const job = i % 8 === 7 ? { newEntity: { name: `new-${i}` } } : { entity: ['a', 'b', 'c'][i % 3] };
      jobs.push(JSON.stringify({ id: `job-${i}`, ...job, input: `question ${i}` }));
    }
    const file = join(dir, 'resume.jsonl');
    writeFileSync(file, jobs.join('\n') + '\n');
    const out = join(dir, 'resume-out.jsonl');
    fake.fallback = (body) => ({ ...echoLastUser(body), delayMs: 60 });
    try {
      const first = spawnMgpt(['batch', file, '-o', out, '--concurrency', '3'], env);
      const end = Date.now() + 20_000;
      while (lines(out).length < 8 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      first.kill('SIGKILL');
      await first.result;
      const halfway = lines(out).length;
      expect(halfway).toBeGreaterThanOrEqual(8);
      expect(halfway).toBeLessThan(24);

      const second = await mgpt(['batch', file, '-o', out, '--concurrency', '3'], env);
      expect(second.code).toBe(0);
      expect(second.stderr).toMatch(/24 of 24 jobs: 24 ok, 0 failed/);
      const results = lines(out);
      expect(results.map((r) => r.id).sort()).toEqual(jobs.map((j) => JSON.parse(j).id).sort());
      expect(results.every((r) => r.ok && r.reply === `reply: ${JSON.parse(jobs.find((j) => JSON.parse(j).id === r.id)!).input}`)).toBe(true);
      expect(results.filter((r) => r.replayed).length).toBeGreaterThanOrEqual(halfway - 3);
    } finally {
      fake.fallback = echoLastUser;
    }
    // Every question is in its entity's transcript exactly once, followed by its reply.
    for (const [k, name] of ['a', 'b', 'c'].entries()) {
      const mine = jobs.map((j) => JSON.parse(j)).filter((j) => j.entity === name).map((j) => j.input);
      expect(await transcript(env, ids[k])).toEqual(mine.flatMap((q) => [q, `reply: ${q}`]));
    }
    const list = JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data as Array<{ name: string; transcript: { messages: number } }>;
    for (const i of [7, 15, 23]) {
      const made = list.filter((e) => e.name === `new-${i}`);
      expect(made).toHaveLength(1);
      expect(made[0].transcript.messages).toBe(2);
    }
  });

  it('Ctrl-C stops taking jobs, keeps the finished results, cancels the rest without a trace and exits 130', async () => {
    const env = cliEnv(join(dir, 'sigint'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const id = (await mgpt(['entities', 'create', '--name', 'solo'], env)).stdout.trim();
    const file = join(dir, 'sigint.jsonl');
    writeFileSync(file, Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `s${i}`, entity: id, input: `step ${i}` })).join('\n'));
    const out = join(dir, 'sigint-out.jsonl');
    fake.fallback = (body) => ({ ...echoLastUser(body), delayMs: 150 });
    try {
      const run = spawnMgpt(['batch', file, '-o', out], env);
      const end = Date.now() + 20_000;
      while (lines(out).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      run.kill('SIGINT');
      const r = await run.result;
      expect(r.code).toBe(130);
      expect(r.stderr).toMatch(/interrupted: run the same command again to finish/);
      const kept = lines(out);
      expect(kept.length).toBeGreaterThanOrEqual(2);
      expect(kept.length).toBeLessThan(10);
      expect(kept.every((x) => x.ok)).toBe(true);
      // The job in flight left nothing: the transcript holds exactly the finished jobs, in order.
      expect(await transcript(env, id)).toEqual(kept.flatMap((x) => [`step ${x.id.slice(1)}`, `reply: step ${x.id.slice(1)}`]));
      // Jobs that never started were not sent: editing them is not a change, and no --fresh is needed.
      fake.fallback = echoLastUser;
      const started = kept.length + 1; // the finished ones and the one cancelled in flight
      writeFileSync(file, Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `s${i}`, entity: id, input: i < started ? `step ${i}` : `edited ${i}` })).join('\n'));
      const rerun = await mgpt(['batch', file], env);
      expect(rerun.code).toBe(0);
      const results = rerun.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((x) => x.reply)).toEqual(Array.from({ length: 10 }, (_, i) => (i < started ? `reply: step ${i}` : `reply: edited ${i}`)));
    } finally {
      fake.fallback = echoLastUser;
    }
  });

  it('has every job\'s record on disk before the first job is sent, and no job waits for one', async () => {
    const env = cliEnv(join(dir, 'upfront'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const id = (await mgpt(['entities', 'create', '--name', 'upfront'], env)).stdout.trim();
    const file = join(dir, 'upfront.jsonl');
    writeFileSync(file, Array.from({ length: 10 }, (_, i) => JSON.stringify({ id: `u${i}`, entity: id, input: `q ${i}` })).join('\n'));
    const journal = join(dir, 'upfront', 'data', 'mgpt', 'batches', `${batchKey({ path: file, content: readFileSync(file, 'utf8') })}.jsonl`);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const calls = fake.requests.length;
    fake.fallback = (body) => ({ ...echoLastUser(body), holdAfterFirst: held });
    try {
      const run = spawnMgpt(['batch', file, '-c', '2'], env);
      const end = Date.now() + 20_000;
      while (fake.requests.length === calls && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      // The first reply is held open: no job has finished, yet all ten are recorded.
      expect(lines(journal).map((r) => r.job).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `u${i}`).sort());
      release();
      const r = await run.result;
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l).reply)).toEqual(Array.from({ length: 10 }, (_, i) => `reply: q ${i}`));
      expect(lines(journal)).toHaveLength(10); // nothing withdrawn: every job started
    } finally {
      release();
      fake.fallback = echoLastUser;
    }
  });

  it('keeps file order within one entity at high concurrency, with replies of random latency', async () => {
    const env = cliEnv(join(dir, 'order'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const names = ['p', 'q', 'r', 's'];
    const ids = new Map<string, string>();
    for (const n of names) ids.set(n, (await mgpt(['entities', 'create', '--name', n], env)).stdout.trim());
    const jobs = Array.from({ length: 40 }, (_, i) => ({ id: `o${i}`, entity: names[(i * 7) % 4], input: `step ${i}` }));
    fake.fallback = (body) => ({ ...echoLastUser(body), delayMs: Math.floor(Math.random() * 40) });
    try {
      const r = await mgpt(['batch', '-', '--concurrency', '8'], env, jobs.map((j) => JSON.stringify(j)).join('\n'));
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n')).toHaveLength(40);
    } finally {
      fake.fallback = echoLastUser;
    }
    for (const n of names) {
      const mine = jobs.filter((j) => j.entity === n).map((j) => j.input);
      expect((await transcript(env, ids.get(n)!)).filter((_, i) => i % 2 === 0)).toEqual(mine);
    }
  });

  it('reports failed jobs as results, goes on with other entities, keeps a failed entity in file order, and exits 1', async () => {
    const env = cliEnv(join(dir, 'fail'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    const ok = (await mgpt(['entities', 'create', '--name', 'ok'], env)).stdout.trim();
    await mgpt(['entities', 'create', '--name', 'other'], env);
    const file = join(dir, 'fail', 'jobs.jsonl');
    writeFileSync(file, ['{"id":"1","entity":"ok","input":"fine"}', '{"id":"2","entity":"ok","input":"explode"}', '{"id":"3","entity":"ghost","input":"x"}', '{"id":"4","entity":"ok","input":"after"}', '{"id":"5","entity":"other","input":"elsewhere"}'].join('\n'));
    let exploding = true;
    fake.fallback = (body) => (exploding && JSON.stringify(body).includes('explode') ? { status: 500 } : echoLastUser(body));
    try {
      const r = await mgpt(['batch', file], env);
      expect(r.code).toBe(1);
      const results = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(Object.fromEntries(results.map((x) => [x.id, x.ok ? x.reply : x.error.exitCode]))).toEqual({ '1': 'reply: fine', '2': 7, '3': 4, '4': 7, '5': 'reply: elsewhere' });
      // Job 4 waits for job 2: it is not sent, and says why.
      expect(results.find((x) => x.id === '4')).toMatchObject({ ok: false, notRun: true, error: { message: expect.stringMatching(/^not run: job 2 before it on the same entity failed/) } });
      expect(r.stderr).toMatch(/5 of 5 jobs: 2 ok, 2 failed, 1 not run/);
      expect(await transcript(env, ok)).toEqual(['fine', 'reply: fine']);
      // A re-run once the provider recovers sends job 2, then job 4: the transcript reads in file order.
      exploding = false;
      const again = await mgpt(['batch', file], env);
      expect(again.code).toBe(1); // job 3's entity still does not exist
      expect(await transcript(env, ok)).toEqual(['fine', 'reply: fine', 'explode', 'reply: explode', 'after', 'reply: after']);
    } finally {
      fake.fallback = echoLastUser;
    }
  });

  it('works on the remote backend against mgpt serve, universes included, and a re-run replays', async () => {
    const serverEnv = cliEnv(join(dir, 'server'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model', MGPT_PROMPTS_DIR: join(dir, 'server-prompts') });
    const prompt = join(dir, 'narrator.md');
    writeFileSync(prompt, 'You narrate.\n');
    expect((await mgpt(['prompts', 'add', 'narrator', '-f', prompt], serverEnv)).code).toBe(0);
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    const universe = JSON.parse((await mgpt(['universes', 'create', '--prompt', 'narrator', '--json'], serverEnv)).stdout).universe;
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    try {
      const client = cliEnv(join(dir, 'client'), { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
      const file = join(dir, 'remote.jsonl');
      writeFileSync(file, [
        JSON.stringify({ id: 'r1', newEntity: { name: 'far' }, input: 'hello from afar' }),
        JSON.stringify({ id: 'r2', universe, input: 'I open the door.' }),
      ].join('\n'));
      const first = await mgpt(['batch', file], client);
      expect(first.code).toBe(0);
      const got = first.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(got.find((x) => x.id === 'r1')).toMatchObject({ ok: true, reply: 'reply: hello from afar' });
      expect(got.find((x) => x.id === 'r2')).toMatchObject({ ok: true, reply: 'reply: I open the door.', universe });
      const calls = fake.requests.length;
      const again = await mgpt(['batch', file], client);
      expect(again.code).toBe(0);
      expect(fake.requests.length).toBe(calls);
      // Every replayed job says so, universe jobs included.
      expect(again.stdout.trim().split('\n').map((l) => JSON.parse(l).replayed)).toEqual([true, true]);
      expect(JSON.parse((await mgpt(['entities', 'list', '--json'], client)).stdout).data.filter((e: { name: string }) => e.name === 'far')).toHaveLength(1);
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });

  it('never answers a job whose input changed with its old reply; --fresh sends it as a new message', async () => {
    const env = cliEnv(join(dir, 'changed'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model', MGPT_PROMPTS_DIR: join(dir, 'changed-prompts') });
    const prompt = join(dir, 'changed-narrator.md');
    writeFileSync(prompt, 'You narrate.\n');
    expect((await mgpt(['prompts', 'add', 'narrator', '-f', prompt], env)).code).toBe(0);
    const universe = JSON.parse((await mgpt(['universes', 'create', '--prompt', 'narrator', '--json'], env)).stdout).universe;
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const file = join(dir, 'changed.jsonl');
    const write = (e: string, u: string) =>
      writeFileSync(file, [JSON.stringify({ id: 'e1', entity: 'ada', input: e }), JSON.stringify({ id: 'u1', universe, input: u }), JSON.stringify({ id: 'same', entity: 'ada', input: 'unchanged' })].join('\n'));
    const run = async (...flags: string[]) => {
      const r = await mgpt(['batch', file, '--concurrency', '1', ...flags], env);
      return { code: r.code, stderr: r.stderr, byId: Object.fromEntries(r.stdout.trim().split('\n').map((l) => JSON.parse(l)).map((x) => [x.id, x])) };
    };
    write('first question', 'I open the door.');
    expect((await run()).code).toBe(0);
    write('second question', 'I close the door.');
    const calls = fake.requests.length;
    const stale = await run();
    expect(stale.code).toBe(1);
    for (const id of ['e1', 'u1']) {
      expect(stale.byId[id]).toMatchObject({ ok: false, changed: true, error: { message: expect.stringContaining(`job ${id} changed since this file last ran`), exitCode: 2 } });
    }
    expect(stale.byId.same).toMatchObject({ ok: true, replayed: true, reply: 'reply: unchanged' });
    expect(fake.requests.length).toBe(calls);
    const fresh = await run('--fresh');
    expect(fresh.code).toBe(0);
    expect(fresh.byId.e1).toMatchObject({ ok: true, reply: 'reply: second question' });
    expect(fresh.byId.e1.replayed).toBeUndefined();
    expect(fresh.byId.u1).toMatchObject({ ok: true, reply: 'reply: I close the door.' });
    expect(fresh.byId.same).toMatchObject({ ok: true, replayed: true });
    // The new version, run again, is a replay like any finished job.
    const again = await run('--fresh');
    expect(Object.values(again.byId).map((x: any) => x.replayed)).toEqual([true, true, true]);
    const history = JSON.parse((await mgpt(['history', 'ada', '--all', '--json'], env)).stdout).data.map((m: { content: string }) => m.content);
    expect(history).toEqual(['first question', 'reply: first question', 'unchanged', 'reply: unchanged', 'second question', 'reply: second question']);
  });
});
