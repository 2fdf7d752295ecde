// bench --only=import (issue 35): a generated ChatGPT export of N conversations (200 messages
// each, with a regenerated reply in every tenth turn) imported by a child process; messages per
// second and the child's peak RSS, on SQLite and (when PostgreSQL can start here) PostgreSQL.
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { startPostgres } from '../test/helpers/postgres.js';

export interface ImportRun {
  store: 'sqlite' | 'postgres';
  conversations: number;
  messages: number;
  ms: number;
  /** The child's CPU time over the import: on a shared machine, what the import itself cost. */
  cpuMs: number;
  peakRssMb: number;
  fileMb: number;
}

const WORDS = 'the a river plan trip budget kyoto train morning soup bread recipe tax letter garden code test import window summary memory'.split(' ');

/** One conversation as ChatGPT's export writes it: a mapping tree and its current node. */
function conversation(c: number, turns: number): string {
  const t0 = 1_600_000_000 + c * 3600;
  const nodes: string[] = [`"root":{"id":"root","message":null,"parent":null,"children":["n0"]}`];
  let parent = 'root';
  for (let i = 0; i < turns * 2; i++) {
    const id = `n${i}`;
    const role = i % 2 ? 'assistant' : 'user';
    const kids = i + 1 < turns * 2 ? [`n${i + 1}`] : [];
    if (role === 'assistant' && i % 20 === 1) kids.push(`r${i}`);
    const text = Array.from({ length: 12 + ((c + i) % 20) }, (_, k) => WORDS[(c * 7 + i * 3 + k) % WORDS.length]).join(' ');
    const msg = `{"id":"${id}","author":{"role":"${role}","name":null,"metadata":{}},"create_time":${t0 + i},"content":{"content_type":"text","parts":[${JSON.stringify(text)}]},"status":"finished_successfully","metadata":{}}`;
    nodes.push(`"${id}":{"id":"${id}","message":${msg},"parent":"${parent}","children":${JSON.stringify(kids)}}`);
    if (kids.length > 1) nodes.push(`"r${i}":{"id":"r${i}","message":{"id":"r${i}","author":{"role":"assistant"},"create_time":${t0 + i},"content":{"content_type":"text","parts":["a regenerated reply"]}},"parent":"${id}","children":[]}`);
    parent = id;
  }
  return `{"title":"Conversation ${c}","create_time":${t0},"update_time":${t0 + turns * 2},"id":"bench-${c}","current_node":"n${turns * 2 - 1}","mapping":{${nodes.join(',')}}}`;
}

/** Writes the export; its size in MB. */
export async function writeExport(file: string, conversations: number, messagesEach: number): Promise<number> {
  const out = createWriteStream(file);
  let bytes = 0;
  const write = async (s: string) => {
    bytes += Buffer.byteLength(s);
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', r));
  };
  await write('[');
  for (let c = 0; c < conversations; c++) await write((c ? ',\n' : '') + conversation(c, messagesEach / 2));
  await write(']\n');
  await new Promise<void>((r) => out.end(r));
  return bytes / 1e6;
}

function runChild(root: string, db: string, file: string): Omit<ImportRun, 'store' | 'fileMb'> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'import-child.ts'), db, file], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`import child failed: ${r.stderr}`);
  const m = JSON.parse(r.stdout) as { ms: number; cpuMs: number; conversations: number; messages: number; peakRss: number };
  return { conversations: m.conversations, messages: m.messages, ms: m.ms, cpuMs: m.cpuMs, peakRssMb: m.peakRss / 1024 / 1024 };
}

export async function benchImport(root: string, work: string, conversations: number, messagesEach = 200): Promise<ImportRun[]> {
  const file = join(work, 'chatgpt-export.json');
  const fileMb = await writeExport(file, conversations, messagesEach);
  const out: ImportRun[] = [{ store: 'sqlite', fileMb, ...runChild(root, join(work, 'import.db'), file) }];
  const cluster = await startPostgres('bench: import on PostgreSQL');
  if (cluster) {
    try {
      out.push({ store: 'postgres', fileMb, ...runChild(root, cluster.url, file) });
    } finally {
      cluster.stop();
    }
  }
  return out;
}
