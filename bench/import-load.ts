// bench --only=import: large and hostile exports sent to a spawned `mgpt serve` (POST /v1/imports)
// while a client polls /healthz: the server's peak RSS over each import and the slowest /healthz
// answer during it. 2 million empty conversations (raw JSON and zipped), one 50 MB message, a
// conversation of 300,000 sibling branches and a chain of 100,000 messages.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, crc32, createDeflateRaw } from 'node:zlib';
import { Agent, request } from 'undici';
import { startChild } from './serve.js';

export interface ImportLoadRun {
  name: string;
  /** The file sent, in MB. */
  fileMb: number;
  status: number;
  /** What the answer said, short: its totals or its error. */
  answer: string;
  ms: number;
  /** The server's peak RSS (VmHWM) after this import; it starts anew for each (a fresh server). */
  peakRssMb: number;
  healthzWorstMs: number;
  healthzCount: number;
}

/** The file a case sends, written once into `work`. */
interface Case {
  name: string;
  query: string;
  write: (file: string) => Promise<void>;
}

/** Streams `count` pieces from `piece(i)` into `file`, inside `[` `]`, with backpressure. */
async function writeArray(file: string, count: number, piece: (i: number) => string, open = '[', close = ']'): Promise<void> {
  const out = createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', r));
  };
  await write(open);
  let batch = '';
  for (let i = 0; i < count; i++) {
    batch += (i ? ',' : '') + piece(i);
    if (batch.length > 1 << 16) await write(batch), (batch = '');
  }
  await write(batch + close);
  await new Promise<void>((r) => out.end(r));
}

const emptyConversation = (i: number) => `{"id":"e${i}","title":"","mapping":{}}`;

/** A zip holding `inner` as conversations.json (deflated as it is read), as ChatGPT sends its export. */
async function zipOf(inner: string, file: string): Promise<void> {
  const data: Buffer[] = [];
  let crc = 0;
  let size = 0;
  const deflate = createDeflateRaw({ level: constants.Z_BEST_COMPRESSION });
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('data', (d: Buffer) => data.push(d));
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  for await (const chunk of createReadStream(inner)) {
    crc = crc32(chunk as Buffer, crc);
    size += (chunk as Buffer).length;
    if (!deflate.write(chunk)) await new Promise<void>((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  const body = Buffer.concat(data);
  const name = Buffer.from('conversations.json');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc >>> 0, 14);
  local.writeUInt32LE(body.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc >>> 0, 16);
  central.writeUInt32LE(body.length, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  const cdOffset = 30 + name.length + body.length;
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(1, 8);
  eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(46 + name.length, 12);
  eocd.writeUInt32LE(cdOffset, 16);
  writeFileSync(file, Buffer.concat([local, name, body, central, name, eocd]));
}

/** A ChatGPT node: its message and where it hangs. */
function node(id: string, parent: string | null, children: string[], role: string, text: string): string {
  const message = `{"id":"${id}","author":{"role":"${role}"},"create_time":1700000000,"content":{"content_type":"text","parts":[${JSON.stringify(text)}]}}`;
  return `"${id}":{"id":"${id}","message":${message},"parent":${parent ? `"${parent}"` : 'null'},"children":${JSON.stringify(children)}}`;
}

function cases(emptyCount: number): Case[] {
  const empty: Case = { name: `${(emptyCount / 1e6).toFixed(1)}M empty conversations, raw JSON, dry run`, query: 'dry_run=true', write: (f) => writeArray(f, emptyCount, emptyConversation) };
  return [
    empty,
    { name: `${(emptyCount / 1e6).toFixed(1)}M empty conversations, zipped, dry run`, query: 'dry_run=true', write: async (f) => (await empty.write(`${f}.json`), await zipOf(`${f}.json`, f)) },
    { name: `${(emptyCount / 1e6).toFixed(1)}M empty conversations, raw JSON, imported`, query: '', write: (f) => writeArray(f, emptyCount, emptyConversation) },
    { name: `${(emptyCount / 1e6).toFixed(1)}M empty conversations, zipped, imported`, query: '', write: async (f) => (await empty.write(`${f}.json`), await zipOf(`${f}.json`, f)) },
    {
      name: 'one 50 MB message',
      query: '',
      write: async (f) => writeFileSync(f, `[{"id":"big","title":"big","current_node":"a","mapping":{${node('u', null, ['a'], 'user', 'x'.repeat(50 * 1024 * 1024))},${node('a', 'u', [], 'assistant', 'ok')}}}]`),
    },
    {
      name: '300,000 sibling branches',
      query: '',
      write: (f) => writeArray(f, 300_000, (i) => node(`b${i}`, 'root', [], 'assistant', `branch ${i}`), `[{"id":"wide","title":"wide","current_node":"b0","mapping":{"root":{"id":"root","message":null,"parent":null,"children":[]},`, '}}]'),
    },
    {
      name: 'a chain of 100,000 messages',
      query: '',
      write: (f) => writeArray(f, 100_000, (i) => node(`c${i}`, i ? `c${i - 1}` : null, i + 1 < 100_000 ? [`c${i + 1}`] : [], i % 2 ? 'assistant' : 'user', `message ${i} of the chain`), `[{"id":"long","title":"long","current_node":"c99999","mapping":{`, '}}]'),
    },
  ];
}

/** Polls /healthz back to back (20 ms apart) until stopped; the latency of each answer. */
function pollHealth(url: string): { stop: () => Promise<number[]> } {
  const agent = new Agent({ connections: 1 });
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await request(`${url}/healthz`, { dispatcher: agent });
        await res.body.text();
      } catch (err) {
        // A kept-alive connection the server closed: the next request opens another; the wait counts.
        if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') throw err;
      }
      times.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return { stop: async () => ((running = false), await loop, await agent.close(), times) };
}

function peakRssMb(child: ChildProcess): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** One case against a fresh server (so its peak RSS is this import's). */
async function runCase(bin: string, work: string, c: Case, file: string, serveArgs: string[]): Promise<ImportLoadRun> {
  const env = { ...process.env, MGPT_DB: join(work, `load-${Date.now()}.db`), MGPT_CONFIG_DIR: join(work, 'load-cfg'), NO_COLOR: '1' };
  const made = spawnSync(process.execPath, [bin, 'keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], { env, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`keys create: ${made.stderr}`);
  const { child, url } = await startChild(process.execPath, [bin, 'serve', '--port', '0', '--log-format', 'off', '--request-timeout', '10m', ...serveArgs], env);
  try {
    const health = pollHealth(url);
    const t0 = performance.now();
    const res = await request(`${url}/v1/imports${c.query ? `?${c.query}` : ''}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${made.stdout.trim()}`, 'content-type': 'application/octet-stream' },
      body: createReadStream(file),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const text = await res.body.text();
    const ms = performance.now() - t0;
    const times = await health.stop();
    return { name: c.name, fileMb: statSync(file).size / 1e6, status: res.statusCode, answer: short(text), ms, peakRssMb: peakRssMb(child), healthzWorstMs: Math.max(...times), healthzCount: times.length };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

function short(text: string): string {
  try {
    const j = JSON.parse(text);
    if (j.totals) return `totals ${JSON.stringify(j.totals)}`;
    return String(j.error ?? text).slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/**
 * The same polling against an idle server for `ms`: on a shared machine /healthz is slow at times
 * with no import at all, and the import cases are read against this.
 */
export async function idleHealthz(bin: string, work: string, ms: number): Promise<{ worstMs: number; count: number }> {
  const env = { ...process.env, MGPT_DB: join(work, `idle-${Date.now()}.db`), MGPT_CONFIG_DIR: join(work, 'load-cfg'), NO_COLOR: '1' };
  const { child, url } = await startChild(process.execPath, [bin, 'serve', '--port', '0', '--log-format', 'off'], env);
  try {
    const health = pollHealth(url);
    await new Promise((r) => setTimeout(r, ms));
    const times = await health.stop();
    return { worstMs: Math.max(...times), count: times.length };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** Every case, each against its own server; `only` picks cases by a word of their name. */
export async function benchImportLoad(bin: string, work: string, emptyCount: number, only?: string, serveArgs = ['--import-max-conversations', String(emptyCount)]): Promise<ImportLoadRun[]> {
  const out: ImportLoadRun[] = [];
  for (const [i, c] of cases(emptyCount).entries()) {
    if (only && !c.name.includes(only)) continue;
    const file = join(work, `load-${i}.bin`);
    await c.write(file);
    out.push(await runCase(bin, work, c, file, serveArgs));
  }
  return out;
}
