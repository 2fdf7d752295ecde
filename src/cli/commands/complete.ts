import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { isPostgresUrl } from '../../core/db-url.js';
import { shortId } from '../../core/ref.js';
import type { CliContext } from '../context.js';

/** How many entities a completion looks through (the remote wire lists 200 at most anyway). */
const SCAN = 1000;

/**
 * `mgpt __complete entities [PREFIX]`: what the completion scripts call where an ENTITY goes. One
 * candidate a line; hidden from help, and silent on any error, since its output lands in a prompt.
 */
export function registerComplete(program: Command, ctx: CliContext): void {
  program
    .command('__complete', { hidden: true })
    .argument('<kind>')
    .argument('[prefix]')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (kind: string, prefix = '') => {
      try {
        if (kind === 'entities') for (const c of await entityCandidates(ctx, prefix)) ctx.io.stdout.write(`${c}\n`);
      } catch {
        // Nothing to offer: the shell falls back to its default.
      }
    });
}

/** Names and short ids (the whole id once the prefix is longer than a short id) that start with `prefix`. */
export async function entityCandidates(ctx: CliContext, prefix: string): Promise<string[]> {
  // A TAB must not create a database file where there is none (a PostgreSQL URL creates nothing).
  const db = ctx.engineOptions().db;
  if (ctx.settings().backend === 'local' && !isPostgresUrl(db) && !existsSync(db)) return [];
  const list = await (await ctx.backend()).listEntities({ limit: SCAN });
  const id = prefix.toLowerCase();
  const out = new Set<string>();
  for (const e of list.data) {
    // A name with a line break cannot be one candidate a line.
    if (e.name && e.name.startsWith(prefix) && !/[\r\n]/.test(e.name)) out.add(e.name);
    if (e.id.startsWith(id)) out.add(id.length > shortId(e.id).length ? e.id : shortId(e.id));
  }
  return [...out];
}
