// mgpt chat: time to the first prompt in a real pty; mgpt batch: N jobs against a slow provider.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEngineSync } from '../src/engine/open-engine.js';
import { startFakeOpenAI } from '../test/helpers/fake-openai.js';

export interface ChatBench {
  firstPromptMs: number[];
}

/**
 * Spawns `mgpt chat` under script(1), which gives it a pseudo-terminal, and times until the
 * status line (drawn with the input prompt) appears; then leaves with Ctrl-D.
 */
function firstPrompt(bin: string, env: NodeJS.ProcessEnv, entity: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} chat ${entity}`, '/dev/null'], {
      env: { ...env, TERM: 'xterm-256color', COLUMNS: '120', LINES: '40' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let seen = '';
    let took = 0;
    child.stdout.on('data', (d) => {
      seen += String(d);
      // The status line, wide ("transcript 0 msgs") or compact ("0 msgs") by the pty's width.
      if (!took && /\d+ msgs/.test(seen)) {
        took = performance.now() - t0;
        child.stdin.write('\x04');
      }
    });
    child.on('exit', () => (took ? resolve(took) : reject(new Error(`chat never showed its prompt:\n${seen}`))));
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

export async function benchChat(root: string, work: string, quick: boolean): Promise<ChatBench> {
  const bin = join(root, 'bin', 'mgpt');
  const fake = await startFakeOpenAI();
  const env = {
    ...process.env,
    MGPT_DB: join(work, 'chat.db'),
    MGPT_CONFIG_DIR: join(work, 'chat-cfg'),
    XDG_DATA_HOME: join(work, 'chat-data'),
    MGPT_PROVIDER: 'openai',
    MGPT_PROVIDER_URL: fake.url,
    NO_COLOR: '1',
  };
  const mg = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  const entity = mg(['entities', 'create', '--name', 'bench']).stdout.trim();
  const firstPromptMs: number[] = [];
  for (let i = 0; i < (quick ? 3 : 7); i++) firstPromptMs.push(await firstPrompt(bin, env, entity));

  await fake.close();
  return { firstPromptMs };
}

export interface BatchBench {
  /** From spawning `mgpt batch` to its exit. */
  batchMs: number;
  /** The part after startup, as the batch's own summary line reports it. */
  batchJobsMs: number;
  batchIdealMs: number;
}

/**
 * `n` jobs over 50 entities (in order within each), every reply 100 ms late, 16 at a time. The
 * provider runs in its own process, as a real one would; this process only waits.
 */
export async function benchBatch(root: string, work: string, n: number): Promise<BatchBench> {
  const bin = join(root, 'bin', 'mgpt');
  const latency = 100;
  const concurrency = 16;
  const dir = mkdtempSync(join(work, 'batch-'));
  const env = { ...process.env, MGPT_DB: join(dir, 'batch.db'), MGPT_CONFIG_DIR: join(dir, 'cfg'), XDG_DATA_HOME: join(dir, 'data'), MGPT_PROVIDER: 'openai', NO_COLOR: '1' };
  const provider = spawn(process.execPath, [join(root, 'bench', 'slow-provider.mjs'), String(latency)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const providerUrl = await new Promise<string>((resolve) => provider.stdout!.once('data', (d) => resolve(String(d).trim())));
  const engine = openEngineSync({ db: env.MGPT_DB });
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) ids.push((await engine.entities.create({ model: 'mgpt-1-27b', name: `b${i}` }, 'local')).id);
  engine.close();
  const file = join(dir, 'jobs.jsonl');
  writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ id: `j${i}`, entity: ids[i % 50], input: `job ${i}` })).join('\n') + '\n');
  const t0 = performance.now();
  let summary = '';
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [bin, 'batch', file, '-c', String(concurrency), '-o', join(dir, 'out.jsonl')], {
      env: { ...env, MGPT_PROVIDER_URL: providerUrl },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (d) => (summary += String(d)));
    child.on('exit', resolve);
  });
  const batchMs = performance.now() - t0;
  provider.kill();
  if (code !== 0) throw new Error(`mgpt batch exited ${code}: ${summary}`);
  const jobs = /in ([\d.]+) s/.exec(summary);
  return { batchMs, batchJobsMs: jobs ? Number(jobs[1]) * 1000 : NaN, batchIdealMs: (n * latency) / concurrency };
}
