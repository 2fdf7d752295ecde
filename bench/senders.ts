// Many CLI senders at once, each on its own entity: no turn may fail with a conflict (exit 5),
// since no two senders ever share an entity.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface SendersBench {
  turns: number;
  /** Turns that failed with exit 5 although their entity had no other writer. */
  falseConflicts: number;
  /** Turns that failed any other way. */
  otherFailures: number;
  wallMs: number;
  firstError?: string;
}

function send(bin: string, env: NodeJS.ProcessEnv, entity: string, text: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, 'send', entity, text], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** `senders` processes at once, one entity each, `turns` sends in a row each, every reply `latencyMs` late. */
export async function benchSenders(root: string, work: string, opts: { senders: number; turns: number; latencyMs: number }): Promise<SendersBench> {
  const bin = join(root, 'bin', 'mgpt');
  const provider = spawn(process.execPath, [join(root, 'bench', 'slow-provider.mjs'), String(opts.latencyMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => provider.stdout!.once('data', (d) => resolve(String(d).trim())));
  const env = {
    ...process.env,
    MGPT_DB: join(work, 'senders.db'),
    MGPT_CONFIG_DIR: join(work, 'senders-cfg'),
    XDG_DATA_HOME: join(work, 'senders-data'),
    MGPT_PROVIDER: 'openai',
    MGPT_PROVIDER_URL: url,
    NO_COLOR: '1',
  };
  const ids: string[] = [];
  for (let i = 0; i < opts.senders; i++) {
    ids.push(spawnSync(process.execPath, [bin, 'entities', 'create', '--name', `s${i}`], { env, encoding: 'utf8' }).stdout.trim());
  }
  const out: SendersBench = { turns: 0, falseConflicts: 0, otherFailures: 0, wallMs: 0 };
  const t0 = performance.now();
  await Promise.all(
    ids.map(async (id, s) => {
      for (let t = 0; t < opts.turns; t++) {
        const r = await send(bin, env, id, `sender ${s} turn ${t}`);
        out.turns++;
        if (r.code === 0) continue;
        if (r.code === 5) out.falseConflicts++;
        else out.otherFailures++;
        out.firstError ??= `exit ${r.code}: ${r.stderr.trim()}`;
      }
    }),
  );
  out.wallMs = performance.now() - t0;
  provider.kill();
  return out;
}
