import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import { isPostgresUrl } from '../../core/db-url.js';
import { CLIENTS, printConfig } from '../../mcp/client-config.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';

export interface McpCommandOptions {
  allowSend?: boolean;
  printConfig?: string;
  url?: string;
}

export function registerMcp(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('mcp')
      .description("serve entities' memory to an MCP client (Claude Code, Claude Desktop, Cursor...) on stdin/stdout: recall, search, transcripts, windows, pinned memory, append (docs/mcp.md)")
      .option('--allow-send', 'also offer send: talk to an entity through its own model (a model call, billed)')
      .option('--print-config <client>', `print the configuration that adds this server to a client: ${CLIENTS.join(', ')}`)
      .option('--url <url>', "with --print-config: connect to a server's /mcp over HTTP instead (a key in MGPT_API_KEY)"),
    [
      'mgpt mcp --print-config claude-code',
      'mgpt mcp --print-config cursor > .cursor/mcp.json',
      'mgpt mcp --print-config claude-code --url https://mgpt.example.com/mcp',
      'mgpt --db ~/notes.db mcp --allow-send',
    ],
  ).action((o: McpCommandOptions) => runMcp(ctx, o));
}

export async function runMcp(ctx: CliContext, o: McpCommandOptions): Promise<void> {
  if (o.printConfig !== undefined) return printClientConfig(ctx, o.printConfig, o);
  if (o.url !== undefined) throw new BadRequestError('--url goes with --print-config: it names the server a client connects to', { hint: 'mgpt mcp --print-config claude-code --url https://HOST/mcp' });
  // A person who ran it at a terminal would see nothing happen: say what it waits for (stderr; stdout is the protocol's).
  if (ctx.io.stdinIsTTY) ctx.io.stderr.write('mgpt mcp: serving MCP on stdin/stdout for a client that starts it; to add it to one: mgpt mcp --print-config claude-code|claude-desktop|cursor (Ctrl-C stops)\n');
  const backend = await ctx.backend();
  const { runStdio } = await import('../../mcp/stdio.js');
  await runStdio({ backend, allowSend: o.allowSend === true, subscriptions: true, version: ctx.version }, ctx.signal);
}

/** The config on stdout (to pipe into a file), where it goes on stderr. */
function printClientConfig(ctx: CliContext, client: string, o: McpCommandOptions): void {
  const args = [binPath(), ...globalArgs(ctx), 'mcp', ...(o.allowSend ? ['--allow-send'] : [])];
  const printed = printConfig({ client, command: process.execPath, args, url: o.url, key: ctx.env.MGPT_API_KEY });
  ctx.io.stdout.write(printed.text);
  ctx.io.stderr.write(`${printed.note}\n`);
}

/** bin/mgpt by its real path: a client starts it with its own PATH and working directory. */
function binPath(): string {
  const script = process.argv[1] ?? 'mgpt';
  try {
    return realpathSync(script);
  } catch {
    return resolve(script);
  }
}

/** The global flags this command was given, so the client's server opens the same database, profile and backend. */
function globalArgs(ctx: CliContext): string[] {
  const f = ctx.flags;
  const db = f.db === undefined ? [] : ['--db', isPostgresUrl(f.db) ? f.db : resolve(f.db)];
  return [...db, ...(f.profile ? ['--profile', f.profile] : []), ...(f.backend ? ['--backend', f.backend] : [])];
}
