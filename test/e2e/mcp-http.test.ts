import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cliEnv, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { call, httpClient, text } from '../helpers/mcp.js';
import { tempDir } from '../helpers/temp.js';

/** /mcp on a spawned `mgpt serve`, driven by the SDK's own Client over streamable HTTP; and the printed HTTP configs, run as printed. */
const dir = tempDir('mgpt-mcp-http-');
const env = cliEnv(join(dir, 'server'));
const json = (s: string) => JSON.parse(s);
let serve: ReturnType<typeof spawnMgpt>;
let url: string;
const keys: Record<'full' | 'logs' | 'acme' | 'limited', string> = { full: '', logs: '', acme: '', limited: '' };
let adaId: string;
let log = '';
const clients: Client[] = [];

async function key(account: string, scopes: string, ...flags: string[]): Promise<string> {
  const r = await mgptBinary(['keys', 'create', '--account', account, '--scopes', scopes, ...flags], env);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}
async function connect(k: string): Promise<Client> {
  const c = await httpClient(`${url}/mcp`, k);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  adaId = (await mgptBinary(['entities', 'create', '--name', 'ada'], env)).stdout.trim();
  expect((await mgptBinary(['accounts', 'create', 'acme'], env)).code).toBe(0);
  keys.full = await key('local', 'mgpt.responses:create');
  keys.logs = await key('local', 'mgpt.logs:read');
  keys.acme = await key('acme', 'mgpt.responses:create');
  keys.limited = await key('local', 'mgpt.responses:create', '--rpm', '4');
  serve = spawnMgpt(['serve', '--port', '0', '--mcp-allow-send', '--log-format', 'json'], env);
  serve.stderr!.on('data', (d) => (log += String(d)));
  url = await new Promise<string>((resolve, reject) => {
    serve.stdout!.once('data', (d) => resolve(String(d).trim()));
    void serve.result.then((r) => reject(new Error(r.stderr)));
  });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  serve?.kill('SIGTERM');
  await serve?.result;
});

describe('/mcp on mgpt serve (streamable HTTP)', () => {
  it('serves the tools and resources with a key; append, recall and send work over it', async () => {
    const c = await connect(keys.full);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['list_entities', 'recall', 'search', 'read_transcript', 'read_window', 'list_rotations', 'memory', 'append', 'send']);
    expect(c.getServerCapabilities()?.resources).toMatchObject({ subscribe: false });
    expect(text(await call(c, 'append', { entity: 'ada', content: 'The boat is called Albatross.', reply: 'Noted.' }))).toBe('recorded in ada as messages #1 and #2');
    expect(text(await call(c, 'recall', { entity: adaId.slice(0, 8), query: 'what is the boat called' }))).toMatch(/^#1 user \(.*\): The boat is called Albatross\.$/m);
    const sent = await call(c, 'send', { entity: 'ada', content: 'hello from http' });
    expect(sent.isError, text(sent)).toBeFalsy();
    expect((await c.listResources()).resources.map((r) => r.uri)).toContain(`mgpt://entities/${adaId}/window`);
    const history = json((await mgptBinary(['history', 'ada', '--json'], env)).stdout);
    expect(history.data.map((m: { content: string }) => m.content)).toEqual(['The boat is called Albatross.', 'Noted.', 'hello from http', 'hello from http']);
  });

  it('a key without the scope gets an MCP tool error with the CLI code and changes nothing; no key is a 401', async () => {
    const c = await connect(keys.logs);
    const before = json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages;
    for (const [name, args] of [['append', { entity: 'ada', content: 'x', reply: 'y' }], ['memory', { command: 'create', path: '/memories/ada/x', file_text: 'y' }], ['list_entities', {}]] as const) {
      const r = await call(c, name, args);
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^error \(forbidden\): the API key lacks the scope mgpt\.responses:create\nhint: create a key with it/);
      expect(r.structuredContent.error).toMatchObject({ code: 'forbidden', status: 403, exit_code: 3 });
    }
    await expect(c.readResource({ uri: `mgpt://entities/${adaId}/window` })).rejects.toThrow(/lacks the scope/);
    expect(json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(before);
    expect(json((await mgptBinary(['memory', 'ada', '--json'], env)).stdout).memory).toEqual([]);
    await expect(httpClient(`${url}/mcp`, 'mgpt_live_0000000000000000.nope')).rejects.toThrow(/malformed API key/);
    expect((await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    // No session to stream on or to end: a GET or DELETE with a good key is a 405 that says to POST.
    const get = await fetch(`${url}/mcp`, { headers: { authorization: `Bearer ${keys.full}`, accept: 'text/event-stream' } });
    expect([get.status, get.headers.get('allow'), (await get.json()).error.message]).toEqual([405, 'POST', expect.stringContaining('POST each request to /mcp')]);
  });

  it("one account never sees another's entities", async () => {
    const c = await connect(keys.acme);
    expect(text(await call(c, 'list_entities'))).toBe('no entities yet: create one with `mgpt entities create --name NAME`');
    for (const [name, args] of [['recall', { entity: adaId, query: 'boat' }], ['read_transcript', { entity: 'ada' }], ['memory', { command: 'view', path: `/memories/${adaId}` }], ['append', { entity: adaId, content: 'x', reply: 'y' }]] as const) {
      const r = await call(c, name, args);
      expect(r.isError, `${name}: ${text(r)}`).toBe(true);
      expect(r.structuredContent.error).toMatchObject({ status: 404, exit_code: 4 });
    }
    expect(text(await call(c, 'search', { query: 'Albatross' }))).toBe('no matches for "Albatross"');
    await expect(c.readResource({ uri: `mgpt://entities/${adaId}/window` })).rejects.toThrow(/no entity/);
    expect((await c.listResources()).resources).toEqual([]);
  });

  it("the key's rate limit and the account's balance hold for MCP calls", async () => {
    const c = await connect(keys.limited);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await call(c, 'list_entities').then(() => 'ok', (err: Error) => err.message));
    expect(results.slice(0, 2)).toEqual(['ok', 'ok']);
    expect(results[results.length - 1]).toMatch(/rate limit reached for requests per minute \(rpm\): limit 4/);
    expect((await mgptBinary(['accounts', 'topup', 'acme', '0.000000001'], env)).code).toBe(0);
    const acme = await connect(keys.acme);
    const created = await fetch(`${url}/v1/entities`, { method: 'POST', headers: { authorization: `Bearer ${keys.acme}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mgpt-1-27b', name: 'bob' }) });
    expect(created.status).toBe(201);
    const refused = await call(acme, 'send', { entity: 'bob', content: 'a question that costs' });
    expect(refused.structuredContent.error).toMatchObject({ code: 'payment_required', status: 402, exit_code: 6 });
    expect(text(await call(acme, 'read_transcript', { entity: 'bob' }))).toMatch(/has no messages/);
  });

  it('a 10 MB content is refused (the body limit, 413) and the server goes on', async () => {
    const c = await connect(keys.full);
    await expect(call(c, 'append', { entity: 'ada', content: 'x'.repeat(10 * 1024 * 1024), reply: 'ok' })).rejects.toThrow(/request body over 1048576 bytes/);
    expect(text(await call(c, 'list_entities'))).toContain('ada');
  });

  it('every MCP request is in the request log, with its key and status', async () => {
    const c = await connect(keys.full);
    await expect(call(c, 'no_such_tool')).rejects.toThrow(/unknown tool "no_such_tool"/);
    expect(text(await call(c, 'list_entities'))).toContain('ada');
    const lines = log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { route: string; status: number; keyId?: string });
    const keyId = `key_${keys.full.slice('mgpt_live_'.length).split('.')[0]}`;
    const mcp = lines.filter((l) => l.route === '/mcp');
    expect(mcp.length).toBeGreaterThan(10);
    expect(mcp.filter((l) => l.keyId === keyId && l.status === 200).length).toBeGreaterThan(5);
    expect(mcp.some((l) => l.status === 413)).toBe(true);
  });

  it('by default /mcp is served without send; --no-mcp leaves it unserved', async () => {
    const plain = spawnMgpt(['serve', '--port', '0'], env);
    const plainUrl = await new Promise<string>((resolve) => plain.stdout!.once('data', (d) => resolve(String(d).trim())));
    const c = await httpClient(`${plainUrl}/mcp`, keys.full);
    expect((await c.listTools()).tools.map((t) => t.name)).not.toContain('send');
    await expect(call(c, 'send', { entity: 'ada', content: 'hi' })).rejects.toThrow(/without --allow-send/);
    await c.close();
    plain.kill('SIGTERM');
    await plain.result;
    const off = spawnMgpt(['serve', '--port', '0', '--no-mcp'], cliEnv(join(dir, 'off')));
    const offUrl = await new Promise<string>((resolve) => off.stdout!.once('data', (d) => resolve(String(d).trim())));
    const res = await fetch(`${offUrl}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${keys.full}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    off.kill('SIGTERM');
    await off.result;
  });
});

describe('mgpt mcp --print-config --url: each client connects as printed', () => {
  it('claude-code: the printed `claude mcp add` line, run in a shell, names the URL and the key from $MGPT_API_KEY', async () => {
    const printed = await mgptBinary(['mcp', '--print-config', 'claude-code', '--url', `${url}/mcp`], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(`claude mcp add --transport http mgpt ${url}/mcp --header "Authorization: Bearer $MGPT_API_KEY"\n`);
    const argv = runWithFakeClaude(printed.stdout, { MGPT_API_KEY: keys.full });
    expect(argv.slice(0, 6)).toEqual(['mcp', 'add', '--transport', 'http', 'mgpt', `${url}/mcp`]);
    expect(argv.slice(6)).toEqual(['--header', `Authorization: Bearer ${keys.full}`]);
    const c = await connectWithHeader(argv[5]!, argv[7]!);
    expect(text(await call(c, 'list_entities'))).toContain('ada');
  });

  it('cursor: url and headers, ${env:MGPT_API_KEY} read from the environment', async () => {
    const printed = await mgptBinary(['mcp', '--print-config', 'cursor', '--url', `${url}/mcp`], env);
    const server = json(printed.stdout).mcpServers.mgpt;
    expect(server).toEqual({ url: `${url}/mcp`, headers: { Authorization: 'Bearer ${env:MGPT_API_KEY}' } });
    const c = await connectWithHeader(server.url, `Authorization: ${server.headers.Authorization.replace('${env:MGPT_API_KEY}', keys.full)}`);
    expect(text(await call(c, 'list_entities'))).toContain('ada');
  });

  it('claude-desktop: a stdio server on the remote backend, pointed at the server with the key', async () => {
    const missing = await mgptBinary(['mcp', '--print-config', 'claude-desktop', '--url', `${url}/mcp`], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/set MGPT_API_KEY/);
    const printed = await mgptBinary(['mcp', '--print-config', 'claude-desktop', '--url', `${url}/mcp`], { ...env, MGPT_API_KEY: keys.full });
    const server = json(printed.stdout).mcpServers.mgpt;
    expect(server.env).toEqual({ MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: keys.full });
    // Claude Desktop starts it with little more than the env block: a fresh config directory, no database of its own.
    const own = cliEnv(join(dir, 'desktop'));
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env: { PATH: own.PATH!, HOME: join(dir, 'desktop'), MGPT_CONFIG_DIR: own.MGPT_CONFIG_DIR!, ...server.env } });
    const c = new Client({ name: 'claude-desktop-like', version: '1' });
    await c.connect(transport);
    clients.push(c);
    expect(text(await call(c, 'recall', { entity: 'ada', query: 'boat Albatross' }))).toContain('The boat is called Albatross.');
    expect(text(await call(c, 'append', { entity: 'ada', content: 'via desktop', reply: 'ok' }))).toMatch(/^recorded in ada as messages #\d+ and #\d+$/);
  });
});

/** Runs a printed shell line with a `claude` on PATH that records its arguments; returns them. */
function runWithFakeClaude(line: string, extra: Record<string, string>): string[] {
  const bin = join(dir, 'fake-bin');
  execFileSync('mkdir', ['-p', bin]);
  const out = join(dir, 'claude-argv.json');
  writeFileSync(join(bin, 'claude'), `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)));\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  execFileSync('sh', ['-c', line], { env: { PATH: `${bin}:${process.env.PATH}`, ...extra } });
  return JSON.parse(readFileSync(out, 'utf8')) as string[];
}

async function connectWithHeader(address: string, header: string): Promise<Client> {
  const [name, ...value] = header.split(':');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const c = new Client({ name: 'printed', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(address), { requestInit: { headers: { [name!.trim()]: value.join(':').trim() } } }));
  clients.push(c);
  return c;
}
