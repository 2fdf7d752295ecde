import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { tempDir } from '../helpers/temp.js';

const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-batch-');
let server: LlamaServer | undefined;
afterEach(() => server?.stop());

const ENTITIES = 10;
const JOBS = 40;

/**
 * `mgpt batch` of 40 jobs on 10 entities, 4 at a time, on each way llama-server lays out a 2,048-token
 * context over its slots, nothing about the server configured in mgpt: every job is answered, and
 * each entity's turns are stored in the file's order.
 */
describe.skipIf(!parts)('mgpt batch on every slot layout of llama-server -c 2048', () => {
  const layouts: Array<[string, string[]]> = [
    ['its default: 4 slots sharing the context', ['-c', '2048']],
    ['-np 4: a 512-token context per slot', ['-c', '2048', '-np', '4']],
    ['-np 4 --kv-unified: 4 slots sharing it', ['-c', '2048', '-np', '4', '--kv-unified']],
  ];
  it.each(layouts)(`${JOBS} of ${JOBS} jobs, in order per entity: %s`, async (label, args) => {
    server = await startLlamaServer(parts!, args);
    const env = cliEnv(join(dir, label.replace(/\W+/g, '-')), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: server.url, MGPT_PROVIDER_MODEL: 'stories' });
    const ids: string[] = [];
    for (let i = 0; i < ENTITIES; i++) ids.push((await mgpt(['entities', 'create', '--name', `e${i}`], env)).stdout.trim());
    const jobs = Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, entity: `e${i % ENTITIES}`, input: `Once upon a time a little dog found ball number ${i} in the park.` }));
    const file = join(dir, `${ids[0]}.jsonl`);
    writeFileSync(file, jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');
    const out = join(dir, `${ids[0]}-out.jsonl`);
    const r = await mgpt(['batch', file, '-o', out, '--concurrency', '4'], env);
    expect(r.stderr).toMatch(new RegExp(`${JOBS} of ${JOBS} jobs: ${JOBS} ok, 0 failed`));
    expect(r.code).toBe(0);
    const results = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(results.filter((x) => x.ok).map((x) => x.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const [k, id] of ids.entries()) {
      const history = JSON.parse((await mgpt(['history', id, '--all', '--json'], env)).stdout).data as Array<{ role: string; content: string }>;
      expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(jobs.filter((j) => j.entity === `e${k}`).map((j) => j.input));
    }
    // A minute or two each under load on this machine.
  }, 400_000);
});
