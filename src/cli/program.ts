import { Command } from 'commander';
import { registerAccounts } from './commands/accounts.js';
import { registerConfig } from './commands/config/config.js';
import { registerEntities } from './commands/entities/index.js';
import { registerExport } from './commands/export.js';
import { registerHistory } from './commands/history.js';
import { registerImage } from './commands/image.js';
import { registerImport } from './commands/import.js';
import { registerKeys } from './commands/keys.js';
import { registerLogin } from './commands/login.js';
import { registerLogs } from './commands/logs.js';
import { registerModels } from './commands/models.js';
import { registerPrompts } from './commands/prompts.js';
import { registerRespond } from './commands/respond.js';
import { registerSend } from './commands/send.js';
import { registerServe } from './commands/serve.js';
import { registerUniverses } from './commands/universes.js';
import { registerWindow } from './commands/window.js';
import type { CliContext } from './context.js';
import { examples } from './help.js';

/** The commander root. Command modules are light; each loads the engine only when it runs. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('mgpt')
    .description('mgpt: long-lived conversations with a model whose memory lives with the platform')
    .version(ctx.version, '-V, --version', 'print the version')
    .option('--db <path>', 'SQLite database of the local backend (env MGPT_DB)')
    .option('--profile <name>', 'config profile (env MGPT_PROFILE)')
    .option('--backend <backend>', 'local (embedded engine) or remote (HTTP; env MGPT_BACKEND)')
    .option('--dev', 'remote: use the /backend-api/mgpt prefix')
    .option('--verbose', 'more detail: rotation notices, ids, usage')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .exitOverride()
    .hook('preAction', () => {
      Object.assign(ctx.flags, program.opts());
    });
  examples(program, [
    'mgpt entities create --name ada --instructions "You are Ada."',
    'mgpt send ada "Hello again"',
    'mgpt window ada',
    'mgpt history ada --all --json',
    'mgpt export ada -o ada.tar',
  ]);
  registerConfig(program, ctx);
  registerLogin(program, ctx);
  registerModels(program, ctx);
  registerEntities(program, ctx);
  registerSend(program, ctx);
  registerHistory(program, ctx);
  registerWindow(program, ctx);
  registerExport(program, ctx);
  registerImport(program, ctx);
  registerPrompts(program, ctx);
  registerUniverses(program, ctx);
  registerRespond(program, ctx);
  registerImage(program, ctx);
  registerLogs(program, ctx);
  registerAccounts(program, ctx);
  registerKeys(program, ctx);
  registerServe(program, ctx);
  // Subcommands inherit output and exit handling from the root.
  for (const cmd of allCommands(program)) {
    cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(add --help for usage)');
  }
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}
