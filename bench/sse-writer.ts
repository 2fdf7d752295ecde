// Why src/server/sse.ts writes to node's response itself (docs/design-server.md): the server's CPU
// per streamed reply, written directly and through Hono's streaming helpers, in interleaved rounds.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export type SseWay = 'direct' | 'stream' | 'sse';
export type SseWriterBench = Record<SseWay, number>;

const WAYS: SseWay[] = ['direct', 'stream', 'sse'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Median server CPU (µs) per reply of `frames` chunk frames, each way, over `rounds` rounds of `replies`. */
export async function benchSseWriter(root: string, frames: number, replies: number, rounds = 3): Promise<SseWriterBench> {
  const child = spawn(process.execPath, [join(root, 'bench', 'sse-writer-server.mjs'), String(frames)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (d) => resolve(String(d).trim()));
      child.once('exit', (code) => reject(new Error(`sse-writer-server exited ${code}`)));
    });
    const cpu = async () => {
      const u = (await (await fetch(`${url}/cpu`)).json()) as { user: number; system: number };
      return u.user + u.system;
    };
    const per: Record<SseWay, number[]> = { direct: [], stream: [], sse: [] };
    for (let r = 0; r < rounds; r++) {
      for (const way of WAYS) {
        for (let i = 0; i < 20; i++) await (await fetch(`${url}/${way}`)).text();
        const c0 = await cpu();
        for (let i = 0; i < replies; i++) {
          const text = await (await fetch(`${url}/${way}`)).text();
          if (!text.endsWith('data: [DONE]\n\n')) throw new Error(`${way}: the reply did not end with [DONE]`);
        }
        per[way].push(((await cpu()) - c0) / replies);
      }
    }
    return { direct: median(per.direct), stream: median(per.stream), sse: median(per.sse) };
  } finally {
    child.kill('SIGTERM');
  }
}
