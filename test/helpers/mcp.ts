import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN } from './cli.js';

/** A tool call's answer as the SDK's Client returns it. */
export interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: any;
}

/** The SDK's own Client on `bin/mgpt ...args` over stdio; the child's stderr is kept for failures. */
export async function stdioClient(args: string[], env: Record<string, string>): Promise<Client & { stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => (err += String(d)));
  const client = new Client({ name: 'mgpt-test', version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, { stderr: () => err });
}

/** The SDK's own Client over streamable HTTP to a server's /mcp, with a Bearer key. */
export async function httpClient(url: string, key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'mgpt-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool; the result's text and fields. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallResult> {
  return (await client.callTool({ name, arguments: args })) as CallResult;
}

export function text(r: CallResult): string {
  return r.content.map((c) => c.text).join('\n');
}

/** Every page of a tool that pages, following next_cursor to the end. */
export async function allPages(client: Client, name: string, args: Record<string, unknown>): Promise<CallResult[]> {
  const pages: CallResult[] = [];
  let cursor: string | undefined;
  do {
    const r = await call(client, name, { ...args, ...(cursor ? { cursor } : {}) });
    if (r.isError) throw new Error(text(r));
    pages.push(r);
    cursor = r.structuredContent?.next_cursor;
  } while (cursor && pages.length < 100);
  return pages;
}
