// bench --only=import: N conversations all titled "New chat" (ChatGPT's default title) against N
// with distinct titles, each imported by a child process into a fresh SQLite file. Naming must
// stay linear: the same-title import within 2x the distinct one.
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { writeChatgptExport } from '../test/helpers/chatgpt-export.js';

export interface NamingRun {
  conversations: number;
  sameMs: number;
  distinctMs: number;
}

function importMs(root: string, db: string, file: string): number {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'import-child.ts'), db, file], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`import child failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { ms: number }).ms;
}

export async function benchImportNaming(root: string, work: string, sizes: readonly number[]): Promise<NamingRun[]> {
  const out: NamingRun[] = [];
  for (const n of sizes) {
    const texts = (i: number) => [`Question ${i}: what is a good name for a boat?`, `Answer ${i}: Marigold, or Heron.`];
    const same = join(work, `same-${n}.json`);
    const distinct = join(work, `distinct-${n}.json`);
    await writeChatgptExport(same, n, (i) => ({ id: `s${i}`, title: 'New chat', at: 1_700_000_000 + i * 60, texts: texts(i) }));
    await writeChatgptExport(distinct, n, (i) => ({ id: `d${i}`, title: `Chat ${i}`, at: 1_700_000_000 + i * 60, texts: texts(i) }));
    // Alternated, twice each: a busy machine's drift falls on both.
    const sameMs: number[] = [];
    const distinctMs: number[] = [];
    for (let k = 0; k < 2; k++) {
      distinctMs.push(importMs(root, join(work, `distinct-${n}-${k}.db`), distinct));
      sameMs.push(importMs(root, join(work, `same-${n}-${k}.db`), same));
    }
    out.push({ conversations: n, sameMs: Math.min(...sameMs), distinctMs: Math.min(...distinctMs) });
  }
  return out;
}
