import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { servedUrl } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp.js';

// Large and hostile exports sent to the real `mgpt serve` (POST /v1/imports), as the load and
// fault probes sent them: a bounded report, the conversation limit, lying zips, a 50 MB message,
// JSON nested 200,000 deep. How long /healthz waits meanwhile is measured by the bench
// (`npm run bench -- --only=import`), not asserted here.
const dir = tempDir('mgpt-serve-imports-');

interface Served {
  url: string;
  key: string;
  env: Record<string, string>;
  stop: () => Promise<void>;
}

async function serve(name: string, args: string[] = []): Promise<Served> {
  const env = cliEnv(join(dir, name));
  const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
  const server = spawnMgpt(['serve', '--port', '0', '--log-format', 'off', ...args], env);
  const url = await servedUrl(server);
  return {
    url,
    key,
    env,
    stop: async () => {
      server.kill('SIGTERM');
      const r = await server.result;
      expect(r.stderr).not.toMatch(/RangeError|Maximum call stack|at .*\.(js|cjs|ts):\d+/);
    },
  };
}

function post(s: Served, body: Uint8Array | string, query = '', headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.url}/v1/imports${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/octet-stream', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

/** A ChatGPT conversation of one exchange (or none: `mapping` empty). */
function conversation(i: number, text?: string): string {
  if (text === undefined) return `{"id":"e${i}","title":"","mapping":{}}`;
  const node = (id: string, parent: string | null, kids: string[], role: string, t: string) =>
    `"${id}":{"id":"${id}","parent":${parent ? `"${parent}"` : 'null'},"children":${JSON.stringify(kids)},"message":{"id":"${id}","author":{"role":"${role}"},"create_time":1700000000,"content":{"content_type":"text","parts":[${JSON.stringify(t)}]}}}`;
  return `{"id":"c${i}","title":"chat ${i}","current_node":"a${i}","mapping":{${node(`u${i}`, null, [`a${i}`], 'user', text)},${node(`a${i}`, `u${i}`, [], 'assistant', 'noted')}}}`;
}

const exportOf = (n: number, text?: string) => `[${Array.from({ length: n }, (_, i) => conversation(i, text)).join(',')}]`;

/** A zip of one deflated conversations.json; `claim` replaces the compressed size its central entry states. */
function zipOf(json: string | Buffer, claim?: { size?: number; zip64?: bigint }): Buffer {
  const data = deflateRawSync(json);
  const name = Buffer.from('conversations.json');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt16LE(name.length, 26);
  const extra = Buffer.alloc(claim?.zip64 === undefined ? 0 : 12);
  if (claim?.zip64 !== undefined) extra.writeUInt16LE(1, 0), extra.writeUInt16LE(8, 2), extra.writeBigUInt64LE(claim.zip64, 4);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(claim?.zip64 !== undefined ? 0xffffffff : (claim?.size ?? data.length), 20);
  central.writeUInt32LE(Buffer.byteLength(json) >>> 0, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt16LE(extra.length, 30);
  const cd = Buffer.concat([central, name, extra]);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(1, 8);
  eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(30 + name.length + data.length, 16);
  return Buffer.concat([local, name, data, cd, eocd]);
}

async function entityCount(s: Served): Promise<number> {
  const res = await fetch(`${s.url}/v1/entities?limit=100`, { headers: { authorization: `Bearer ${s.key}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: unknown[] }).data.length;
}

describe('POST /v1/imports with many conversations', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve('many', ['--import-max-conversations', '6000']);
  });
  afterAll(() => s?.stop());

  it('answers a summarized report: the totals of every conversation and the first 1,000 rows, raw or zipped', async () => {
    const json = exportOf(5000);
    for (const body of [json, zipOf(json)]) {
      const res = await post(s, body, '?dry_run=true');
      expect(res.status).toBe(200);
      const text = await res.text();
      const report = JSON.parse(text);
      expect(report.totals).toEqual({ conversations: 5000, imported: 0, skipped: 5000, refused: 0, messages: 0, tokens: 0, branches_left_out: 0 });
      expect(report.conversations).toHaveLength(1000);
      expect(report.conversations[999]).toMatchObject({ source_id: 'e999', outcome: 'skipped' });
      expect(report.conversations_omitted).toBe(4000);
      expect(report.entities_omitted).toBe(0);
      expect(text.length).toBeLessThan(300_000);
    }
  });

  it('streams every conversation as a line with Accept: application/x-ndjson, then the report', async () => {
    const res = await post(s, exportOf(3000), '?dry_run=true', { accept: 'application/x-ndjson' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3001);
    expect(lines.slice(0, 3000).map((l) => l.source_id)).toEqual(Array.from({ length: 3000 }, (_, i) => `e${i}`));
    expect(lines[2999]).toMatchObject({ object: 'import.conversation', outcome: 'skipped', reason: expect.stringMatching(/^empty/) });
    expect(lines[3000]).toMatchObject({ object: 'import', totals: { conversations: 3000 }, conversations_omitted: 2000 });
  });

  it('over NDJSON, a conversation that breaks after the first line ends the stream with an error line naming it', async () => {
    const body = `[${conversation(0)},{"id":"bad","mapping":{"x": tru}}]`;
    const res = await post(s, body, '?dry_run=true', { accept: 'application/x-ndjson' });
    expect(res.status).toBe(200);
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ object: 'import.conversation', source_id: 'e0' });
    expect(lines[1]).toMatchObject({ object: 'error', status: 400, code: 'bad_request', error: expect.stringMatching(/conversation 2 is not valid JSON .*\(at byte \d+\)/) });
  });

  it('refuses an export over the limit with 413 and a hint, before writing anything; under it, the import is made', async () => {
    const res = await post(s, exportOf(6001, 'hello there'));
    expect(res.status).toBe(413);
    const err = await res.json();
    expect(err.error).toMatch(/the export holds more than 6,000 conversations, the most one import may hold/);
    expect(err.hint).toMatch(/import it in parts of at most 6,000 .*mgpt serve --import-max-conversations/);
    expect(await entityCount(s)).toBe(0);
    const ok = await post(s, exportOf(3, 'hello there'));
    expect(ok.status).toBe(200);
    expect((await ok.json()).totals.imported).toBe(3);
  });

  it('mgpt import against the server prints the first rows, says how many more, and --json gives the summarized report', async () => {
    const file = join(dir, 'many.json');
    writeFileSync(file, exportOf(1500));
    const client = cliEnv(join(dir, 'client'), { MGPT_BACKEND: 'remote', MGPT_BASE_URL: s.url, MGPT_ENTITIES_URL: `${s.url}/v1`, MGPT_API_KEY: s.key });
    const table = await mgpt(['import', file, '--dry-run'], client);
    expect(table.code).toBe(0);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(1000);
    expect(table.stderr).toContain('(500 more conversations not listed: the report lists the first 1,000; the totals count them all)');
    expect(table.stderr).toContain('would import 0 of 1,500 conversations from chatgpt');
    const json = await mgpt(['import', file, '--dry-run', '--json'], client);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ conversations_omitted: 500, totals: { conversations: 1500, skipped: 1500 } });
    writeFileSync(file, exportOf(6001));
    const over = await mgpt(['import', file, '--dry-run'], client);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/^error: import: the export holds more than 6,000 conversations.*\nhint: import it in parts of at most 6,000/m);
  });
});

describe('POST /v1/imports with hostile input', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve('hostile');
  });
  afterAll(() => s?.stop());

  it('refuses a zip whose header claims a compressed size of 0xFFFFFFF0 (400), before inflating it', async () => {
    // 100 MB of one conversation's text deflates to some 100 KB; the claimed size would allow 200 times 4 GB.
    const json = Buffer.concat([Buffer.from('[{"id":"z","title":"z","mapping":{},"pad":"'), Buffer.alloc(100 * 1024 * 1024, 0x78), Buffer.from('"}]')]);
    const res = await post(s, zipOf(json, { size: 0xfffffff0 }), '?dry_run=true');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/conversations.json claims 4294967280 compressed bytes, but only \d+ lie between its start and the central directory/);
  });

  it('a zip64 size of 2^60 is a 400 naming the damage, not a 500', async () => {
    const res = await post(s, zipOf(exportOf(1), { zip64: 2n ** 60n }), '?dry_run=true');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/claims \d+ compressed bytes/);
  });

  it('invalid JSON nested 200,000 deep is a 400 naming the byte, not a stack overflow', async () => {
    const depth = 200_000;
    const res = await post(s, `[{"a": ${'['.repeat(depth)}${']'.repeat(depth - 1)}}}]`, '?dry_run=true');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(new RegExp(`conversation 1 is not valid JSON .*\\(at byte ${7 + 2 * depth - 1}\\)`));
  });

  it('refuses a conversation with a 50 MB message by name, imports the others, and stays up', async () => {
    const body = `[${conversation(0, 'before')},${conversation(1, 'x'.repeat(50 * 1024 * 1024))},${conversation(2, 'after')}]`;
    const res = await post(s, body);
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(report.conversations.map((c: { outcome: string }) => c.outcome)).toEqual(['created', 'refused', 'created']);
    expect(report.conversations[1]).toMatchObject({ source_id: 'c1', title: 'chat 1', entity_id: null, messages: 0 });
    expect(report.conversations[1].reason).toBe('message 1 holds 50 MiB, over the 1 MiB a message may hold (as a sent one): nothing of this conversation is imported');
    expect(report.totals).toMatchObject({ conversations: 3, imported: 2, skipped: 1, refused: 1 });
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });
});

describe('the conversation limit on the local backend', () => {
  it('is engine.importMaxConversations, set with mgpt config set (or MGPT_IMPORT_MAX_CONVERSATIONS): exit 2 with the hint, nothing written', async () => {
    const env = cliEnv(join(dir, 'local'));
    const file = join(dir, 'local.json');
    writeFileSync(file, exportOf(3, 'hello there'));
    expect((await mgpt(['config', 'set', 'engine.importMaxConversations', '2'], env)).code).toBe(0);
    const over = await mgpt(['import', file], env);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/^error: import: the export holds more than 2 conversations, the most one import may hold\nhint: import it in parts of at most 2 /);
    expect(JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data).toEqual([]);
    const raised = await mgpt(['import', file, '--json'], { ...env, MGPT_IMPORT_MAX_CONVERSATIONS: '3' });
    expect(raised.code).toBe(0);
    expect(JSON.parse(raised.stdout).totals.imported).toBe(3);
  });
});
