import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, cliEnv, mgptBinary } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { allPages, call, stdioClient, text } from '../helpers/mcp.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { tempDir } from '../helpers/temp.js';

/** `mgpt mcp` over stdio, driven by the official SDK's Client: the real binary, a real SQLite file. */
const dir = tempDir('mgpt-mcp-');
const json = (s: string) => JSON.parse(s);
let fake: FakeOpenAI;
const open: Client[] = [];
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await fake.close();
});

async function client(env: Record<string, string>, ...args: string[]) {
  const c = await stdioClient(['mcp', ...args], env);
  open.push(c);
  return c;
}
async function entity(env: Record<string, string>, name: string, ...flags: string[]): Promise<string> {
  const r = await mgptBinary(['entities', 'create', '--name', name, ...flags], env);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('mgpt mcp (stdio)', () => {
  it('lists its tools (no send without --allow-send), resource templates and resources', async () => {
    const env = cliEnv(join(dir, 'list'));
    const id = await entity(env, 'ada');
    const c = await client(env);
    const tools = (await c.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(['list_entities', 'recall', 'search', 'read_transcript', 'read_window', 'list_rotations', 'memory', 'append']);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(60);
      expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    }
    expect(tools.find((t) => t.name === 'recall')!.inputSchema.required).toEqual(['entity', 'query']);
    expect(tools.find((t) => t.name === 'memory')!.inputSchema.properties!.command).toMatchObject({ enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] });
    expect((await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['mgpt://entities/{id}/window', 'mgpt://entities/{id}/memory/{label}']);
    expect((await c.listResources()).resources.map((r) => r.uri)).toEqual([`mgpt://entities/${id}/window`]);
    const read = await c.readResource({ uri: `mgpt://entities/${id}/window` });
    expect(read.contents[0]).toMatchObject({ mimeType: 'text/plain', text: expect.stringContaining('ada: window of 0 of') });
    expect(c.getServerCapabilities()).toMatchObject({ tools: {}, resources: { subscribe: true, listChanged: true } });
  });

  it('send is refused without --allow-send (nothing stored) and is a turn with it', async () => {
    const env = cliEnv(join(dir, 'send'));
    await entity(env, 'ada');
    const without = await client(env);
    await expect(call(without, 'send', { entity: 'ada', content: 'hello' })).rejects.toThrow(/not offered: this server was started without --allow-send/);
    expect(json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(0);
    const withSend = await client(env, '--allow-send');
    expect((await withSend.listTools()).tools.map((t) => t.name)).toContain('send');
    const r = await call(withSend, 'send', { entity: 'ada', content: 'hello there' });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toContain('hello there');
    expect(r.structuredContent.usage.completion_tokens).toBeGreaterThan(0);
    expect(json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(2);
  });

  it('recall finds a fact folded 40 turns earlier, within its max_tokens', async () => {
    const env = cliEnv(join(dir, 'recall'), { MGPT_WINDOW_BUDGET: '300' });
    await entity(env, 'ada');
    const c = await client(env, '--allow-send');
    expect((await call(c, 'send', { entity: 'ada', content: 'My sister Ingrid teaches violin at the conservatory in Zanzibar.' })).isError).toBeFalsy();
    for (let i = 0; i < 40; i++) {
      const r = await call(c, 'send', { entity: 'ada', content: `Turn ${i}: the weather report says clouds over the harbour, number ${i}.` });
      expect(r.isError, text(r)).toBeFalsy();
    }
    const window = await call(c, 'read_window', { entity: 'ada', max_tokens: 20_000 });
    expect(text(window)).toContain('[summary of #1-');
    expect(text(window)).not.toMatch(/^#1 user:/m);
    expect(text(await call(c, 'list_rotations', { entity: 'ada' }))).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d turn: folded #1-#\d+ into \d+ tokens: /m);
    // The window the model saw when it answered the first message still holds it.
    expect(text(await call(c, 'read_window', { entity: 'ada', at: '1' }))).toMatch(/when it answered #1, 0 blocks/);
    expect(text(await call(c, 'read_window', { entity: 'ada', at: '3' }))).toMatch(/^#1 user: My sister Ingrid/m);
    const recalled = await call(c, 'recall', { entity: 'ada', query: 'where does my sister teach violin?', max_tokens: 120 });
    expect(text(recalled)).toMatch(/^#1 user \(\d{4}-\d\d-\d\d \d\d:\d\d\): My sister Ingrid teaches violin at the conservatory in Zanzibar\.$/m);
    expect(recalled.structuredContent.tokens).toBeLessThanOrEqual(120);
    expect((await loadTokenEstimator()).count(text(recalled))).toBeLessThanOrEqual(120);
  }, 120_000);

  it('search pages with a cursor until done, never repeating a hit', async () => {
    const env = cliEnv(join(dir, 'search'));
    await entity(env, 'ada');
    const c = await client(env);
    for (let i = 1; i <= 25; i++) expect((await call(c, 'append', { entity: 'ada', content: `kumquat note ${i}`, reply: 'Noted.' })).isError).toBeFalsy();
    const pages = await allPages(c, 'search', { query: 'kumquat', entity: 'ada', limit: 10 });
    expect(pages.length).toBe(3);
    const seqs = pages.flatMap((p) => p.structuredContent.hits.map((h: { seq: number }) => h.seq));
    expect(seqs.length).toBe(25);
    expect(new Set(seqs).size).toBe(25);
    expect(text(pages[0])).toContain('[more matches: call again with cursor "');
    expect(pages[2].structuredContent.next_cursor).toBeUndefined();
    // A small max_tokens pages too: every page within it, and still every hit once.
    const small = await allPages(c, 'search', { query: 'kumquat', limit: 25, max_tokens: 100 });
    expect(small.length).toBeGreaterThan(2);
    for (const p of small) expect(p.structuredContent.tokens).toBeLessThanOrEqual(100);
    expect(new Set(small.flatMap((p) => p.structuredContent.hits.map((h: { seq: number }) => h.seq))).size).toBe(25);
  });

  it('append shows in the transcript (read by another process) and read_transcript pages through it', async () => {
    const env = cliEnv(join(dir, 'append'));
    await entity(env, 'ada');
    const c = await client(env);
    const r = await call(c, 'append', { entity: 'ada', content: 'Remember: the deploy key rotates on Fridays.', reply: 'Noted.' });
    expect(text(r)).toBe('recorded in ada as messages #1 and #2');
    const history = json((await mgptBinary(['history', 'ada', '--json'], env)).stdout);
    expect(history.data.map((m: { seq: number; role: string; content: string }) => [m.seq, m.role, m.content])).toEqual([
      [1, 'user', 'Remember: the deploy key rotates on Fridays.'],
      [2, 'assistant', 'Noted.'],
    ]);
    for (let i = 0; i < 30; i++) await call(c, 'append', { entity: 'ada', content: `note ${i} ${'words '.repeat(20)}`, reply: 'Noted.' });
    const pages = await allPages(c, 'read_transcript', { entity: 'ada', max_tokens: 200 });
    const lines = pages.flatMap((p) => text(p).split('\n').filter((l) => /^#\d+ /.test(l)));
    expect(lines.map((l) => Number(/^#(\d+)/.exec(l)![1]))).toEqual(Array.from({ length: 62 }, (_, i) => i + 1));
    for (const p of pages) expect(p.structuredContent.tokens).toBeLessThanOrEqual(200);
    expect(text(await call(c, 'read_transcript', { entity: 'ada', from_seq: 61 }))).toMatch(/^#61 user .*\n#62 assistant .*: Noted\.$/m);
  });

  it("the memory commands change what the next turn's prompt holds", async () => {
    const env = cliEnv(join(dir, 'memory'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    await entity(env, 'ada', '--instructions', 'You are Ada.');
    const c = await client(env, '--allow-send');
    const system = async () => {
      expect((await call(c, 'send', { entity: 'ada', content: 'what do I eat?' })).isError).toBeFalsy();
      const body = fake.requests[fake.requests.length - 1]!.body as { messages: Array<{ role: string; content: string }> };
      return body.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
    };
    const ok = async (args: Record<string, unknown>) => {
      const r = await call(c, 'memory', args);
      expect(r.isError, text(r)).toBeFalsy();
      return text(r);
    };
    await ok({ command: 'create', path: '/memories/ada/diet', file_text: 'vegetarian\nno nuts' });
    expect(await system()).toContain('diet: vegetarian\nno nuts');
    await ok({ command: 'str_replace', path: '/memories/ada/diet', old_str: 'vegetarian', new_str: 'vegan' });
    await ok({ command: 'insert', path: '/memories/ada/diet', insert_line: 0, insert_text: 'since 2024:' });
    expect(await ok({ command: 'view', path: '/memories/ada/diet' })).toBe('/memories/ada/diet, lines 1-3 of 3:\n     1\tsince 2024:\n     2\tvegan\n     3\tno nuts');
    await ok({ command: 'rename', old_path: '/memories/ada/diet', new_path: '/memories/ada/food' });
    expect(await ok({ command: 'view', path: '/memories/ada' })).toMatch(/^\/memories\/ada\/food {2}\(\d+ tokens, 3 lines\)$/m);
    const renamed = await system();
    expect(renamed).toContain('food: since 2024:\nvegan\nno nuts');
    expect(renamed).not.toContain('diet:');
    // A refused edit changes nothing and says why, with the CLI's code.
    const missing = await call(c, 'memory', { command: 'str_replace', path: '/memories/ada/food', old_str: 'pasta', new_str: 'rice' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^error \(bad_request\): memory str_replace: old_str does not appear verbatim in \/memories\/ada\/food; nothing changed\nhint: /);
    expect(missing.structuredContent.error).toMatchObject({ code: 'bad_request', status: 400, exit_code: 2 });
    const gone = await call(c, 'memory', { command: 'view', path: '/memories/ada/nope' });
    expect(gone.structuredContent.error).toMatchObject({ status: 404, exit_code: 4 });
    await ok({ command: 'delete', path: '/memories/ada/food' });
    expect(await system()).toBe('You are Ada.');
    const history = json((await mgptBinary(['memory', 'ada', '--history', '--json'], env)).stdout);
    expect(history.history.length).toBeGreaterThanOrEqual(5);
  });

  it('a client that cancels a send cancels the turn: nothing stored, and the entity takes the next one', async () => {
    const env = cliEnv(join(dir, 'cancel'), { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
    await entity(env, 'ada');
    const c = await client(env, '--allow-send');
    fake.script({ text: ['a', ' very', ' slow', ' reply'], chunkDelayMs: 1000 });
    const asked = fake.requests.length;
    const aborted = fake.aborted;
    const stop = new AbortController();
    const sending = c.callTool({ name: 'send', arguments: { entity: 'ada', content: 'take your time' } }, undefined, { signal: stop.signal });
    while (fake.requests.length === asked) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    await expect(sending).rejects.toThrow(/abort/i);
    await until(() => fake.aborted > aborted);
    expect(json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(0);
    const next = await call(c, 'send', { entity: 'ada', content: 'and now?' });
    expect(next.isError, text(next)).toBeFalsy();
    expect(json((await mgptBinary(['history', 'ada', '--json'], env)).stdout).data.map((m: { content: string }) => m.content)).toEqual(['and now?', 'reply: and now?']);
  });

  it('hostile input gets clear errors, changes nothing, and the server stays up', async () => {
    const env = cliEnv(join(dir, 'hostile'));
    await entity(env, 'ada');
    const c = await client(env);
    const refused = async (name: string, args: Record<string, unknown>, message: RegExp) => {
      const r = await call(c, name, args);
      expect(r.isError, text(r)).toBe(true);
      expect(text(r)).toMatch(message);
      return r;
    };
    const big = 'x'.repeat(10 * 1024 * 1024);
    const r = await refused('append', { entity: 'ada', content: big, reply: 'ok' }, /^error \(bad_request\): append: content is 10485760 characters; at most 1000000$/);
    expect(r.structuredContent.error).toMatchObject({ code: 'bad_request', exit_code: 2 });
    await refused('recall', { entity: 'a'.repeat(5000), query: 'x' }, /recall: entity is 5000 characters; at most 200/);
    await refused('recall', { entity: 'ada', query: 'q'.repeat(2000) }, /recall: query is 2000 characters; at most 1000/);
    await refused('search', { query: 'x', limit: 'ten' }, /search: limit must be an integer/);
    await refused('search', { query: 'x', limit: 1e9 }, /search: limit must be from 1 to 100/);
    await refused('read_transcript', { entity: 'ada', max_tokens: 10_000_000 }, /max_tokens must be from 100 to 20000/);
    await refused('append', { entity: 'ada', content: 'hi', reply: 'ok', role: 'user' }, /append: unknown argument "role"/);
    await refused('memory', { command: 'view', path: '/etc/passwd' }, /is outside \/memories/);
    await refused('memory', { command: 'view', path: '/memories/ada/../../x' }, /has an empty, \. or \.\. part/);
    await refused('memory', { command: 'explode', path: '/memories' }, /command must be one of view, create/);
    await refused('read_transcript', { entity: 'ada', cursor: 'not a cursor!' }, /cursor "not a cursor!" is not one read_transcript gave/);
    const other = (await call(c, 'list_entities', { max_tokens: 100 })).structuredContent.next_cursor ?? Buffer.from('{"t":"list_entities","at":0}').toString('base64url');
    await refused('read_transcript', { entity: 'ada', cursor: other }, /is not one read_transcript gave/);
    await refused('list_entities', { cursor: Buffer.from('{"t":"list_entities","at":-5}').toString('base64url') }, /the cursor is damaged/);
    for (let i = 0; i < 12; i++) await call(c, 'append', { entity: 'ada', content: `lemon ${i}`, reply: 'ok' });
    const page = await call(c, 'search', { query: 'lemon', limit: 5 });
    await refused('search', { query: 'lime', limit: 5, cursor: page.structuredContent.next_cursor }, /the cursor belongs to another query/);
    await expect(call(c, 'drop_tables', {})).rejects.toThrow(/unknown tool "drop_tables"; the tools are list_entities, recall/);
    // Still serving, and nothing of the refused calls was stored.
    expect(text(await call(c, 'list_entities'))).toContain('ada');
    expect(json((await mgptBinary(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(24);
  });

  it('tells a subscriber when a subscribed memory block changes, by this server or another process', async () => {
    const env = cliEnv(join(dir, 'subscribe'));
    const id = await entity(env, 'ada');
    const c = await client(env);
    await call(c, 'memory', { command: 'create', path: '/memories/ada/user', file_text: 'Ada' });
    const uri = `mgpt://entities/${id}/memory/user`;
    const updated: string[] = [];
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await c.subscribeResource({ uri });
    await call(c, 'memory', { command: 'str_replace', path: '/memories/ada/user', old_str: 'Ada', new_str: 'Ada Lovelace' });
    await until(() => updated.length >= 1);
    expect(((await c.readResource({ uri })).contents[0] as { text: string }).text).toBe('Ada Lovelace');
    expect((await mgptBinary(['memory', 'set', 'ada', 'user', 'Ada, countess'], env)).code).toBe(0);
    await until(() => updated.length >= 2);
    expect(updated).toEqual([uri, uri]);
  });
});

describe('mgpt mcp --print-config (stdio): each client starts the server as printed', () => {
  const env = cliEnv(join(dir, 'printed'));
  const printed = async (client: string) => {
    const r = await mgptBinary(['--db', env.MGPT_DB!, 'mcp', '--print-config', client], env);
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  /** Starts what a client would start, with a bare environment (a GUI app's), and lists the entities. */
  const startAs = async (command: string, args: string[]) => {
    const transport = new StdioClientTransport({ command, args, env: { HOME: env.HOME ?? dir, MGPT_CONFIG_DIR: env.MGPT_CONFIG_DIR! } });
    const c = new Client({ name: 'printed', version: '1' });
    await c.connect(transport);
    open.push(c);
    return text(await call(c, 'list_entities'));
  };

  it('claude-desktop and cursor: mcpServers.mgpt with the command by absolute path', async () => {
    await entity(env, 'printed-ada');
    for (const client of ['claude-desktop', 'cursor']) {
      const r = await printed(client);
      const server = json(r.stdout).mcpServers.mgpt;
      expect(server).toEqual({ command: process.execPath, args: [realpathSync(BIN), '--db', env.MGPT_DB, 'mcp'] });
      expect(r.stderr).toContain(client === 'cursor' ? '.cursor/mcp.json' : 'claude_desktop_config.json');
      expect(await startAs(server.command, server.args)).toContain('printed-ada');
    }
  });

  it('claude-code: `claude mcp add --transport stdio mgpt -- COMMAND`, whose command starts the server', async () => {
    const r = await printed('claude-code');
    expect(r.stdout).toBe(`claude mcp add --transport stdio mgpt -- ${process.execPath} ${realpathSync(BIN)} --db ${env.MGPT_DB} mcp\n`);
    const words = r.stdout.trim().split(' -- ')[1]!.split(' ');
    expect(await startAs(words[0]!, words.slice(1))).toContain('printed-ada');
  });

  it('refuses an unknown client or a bad --url', async () => {
    const r = await mgptBinary(['mcp', '--print-config', 'emacs'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--print-config takes claude-code, claude-desktop, cursor, got "emacs"');
    expect((await mgptBinary(['mcp', '--print-config', 'cursor', '--url', 'ftp://x/mcp'], env)).stderr).toMatch(/must be the http\(s\) address of a server's \/mcp/);
    const stray = await mgptBinary(['mcp', '--url', 'http://127.0.0.1:1/mcp'], env);
    expect([stray.code, stray.stderr]).toEqual([2, expect.stringContaining('--url goes with --print-config')]);
  });
});

async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out waiting for a notification');
    await new Promise((r) => setTimeout(r, 50));
  }
}
