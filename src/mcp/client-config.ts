import { BadRequestError, ConfigError } from '../core/errors.js';

/** The clients `mgpt mcp --print-config` knows, and where each keeps its configuration. */
export const CLIENTS = ['claude-code', 'claude-desktop', 'cursor'] as const;
export type Client = (typeof CLIENTS)[number];

/** How the client starts `mgpt mcp` (stdio), or the server's /mcp address and key (HTTP). */
export interface ConfigInput {
  client: string;
  /** The program and arguments that run `mgpt mcp` (node and bin/mgpt, by absolute path). */
  command: string;
  args: string[];
  /** HTTP: the /mcp address of a `mgpt serve`. */
  url?: string;
  /** HTTP for Claude Desktop: the key itself (it does not expand variables in its file). */
  key?: string;
}

/** What to print: the config (stdout) and where it goes (stderr). */
export interface PrintedConfig {
  text: string;
  note: string;
}

export function printConfig(i: ConfigInput): PrintedConfig {
  if (!(CLIENTS as readonly string[]).includes(i.client)) throw new BadRequestError(`--print-config takes ${CLIENTS.join(', ')}, got ${JSON.stringify(i.client)}`);
  const client = i.client as Client;
  if (i.url !== undefined) checkUrl(i.url);
  if (client === 'claude-code') return claudeCode(i);
  if (client === 'cursor') return cursor(i);
  return claudeDesktop(i);
}

function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BadRequestError(`--url ${JSON.stringify(url)} is not an address`, { hint: 'for example --url http://127.0.0.1:8080/mcp' });
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.pathname.endsWith('/mcp')) {
    throw new BadRequestError(`--url ${JSON.stringify(url)} must be the http(s) address of a server's /mcp`, { hint: 'for example --url http://127.0.0.1:8080/mcp' });
  }
}

/** `claude mcp add`: the key stays in the environment ($MGPT_API_KEY, expanded by the shell that runs the line). */
function claudeCode(i: ConfigInput): PrintedConfig {
  if (i.url !== undefined) {
    return { text: `claude mcp add --transport http mgpt ${shellQuote(i.url)} --header "Authorization: Bearer $MGPT_API_KEY"\n`, note: 'run this line in a shell where MGPT_API_KEY holds the key (add --scope user to use it in every project)' };
  }
  return { text: `claude mcp add --transport stdio mgpt -- ${[i.command, ...i.args].map(shellQuote).join(' ')}\n`, note: 'run this line (add --scope user to use it in every project)' };
}

/** .cursor/mcp.json: `${env:MGPT_API_KEY}` is read from Cursor's environment. */
function cursor(i: ConfigInput): PrintedConfig {
  const server = i.url !== undefined ? { url: i.url, headers: { Authorization: 'Bearer ${env:MGPT_API_KEY}' } } : { command: i.command, args: i.args };
  const note = `put this in .cursor/mcp.json in a project, or ~/.cursor/mcp.json for all of them (merge "mgpt" into an existing "mcpServers")${i.url !== undefined ? '; Cursor reads MGPT_API_KEY from its environment' : ''}`;
  return { text: json({ mcpServers: { mgpt: server } }), note };
}

/**
 * claude_desktop_config.json starts servers on stdio only (a remote one is a connector in its
 * settings, which wants OAuth), so for HTTP it starts `mgpt mcp` on the remote backend, pointed at
 * the server with the key in its env: the same tools, over the same /v1 routes.
 */
function claudeDesktop(i: ConfigInput): PrintedConfig {
  const where = 'claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\); merge "mgpt" into an existing "mcpServers", then restart Claude Desktop';
  if (i.url === undefined) return { text: json({ mcpServers: { mgpt: { command: i.command, args: i.args } } }), note: `put this in ${where}` };
  if (!i.key) throw new ConfigError('Claude Desktop does not expand variables in its config file: set MGPT_API_KEY to the key to print it in', { hint: 'MGPT_API_KEY=mgpt_live_... mgpt mcp --print-config claude-desktop --url URL' });
  const base = i.url.replace(/\/mcp$/, '');
  const env = { MGPT_BACKEND: 'remote', MGPT_BASE_URL: base, MGPT_ENTITIES_URL: `${base}/v1`, MGPT_API_KEY: i.key };
  return { text: json({ mcpServers: { mgpt: { command: i.command, args: i.args, env } } }), note: `put this in ${where}; it holds the key in full: keep the file private` };
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
