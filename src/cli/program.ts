import { Command } from 'commander';
import { registerAccounts } from './commands/accounts.js';
import { registerAsk } from './commands/ask.js';
import { registerBatch } from './commands/batch.js';
import { registerChat } from './commands/chat.js';
import { registerComplete } from './commands/complete.js';
import { registerCompletion } from './commands/completion.js';
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

/** Top-level commands, by the names (and aliases) that select them. */
const COMMANDS: Array<[string[], (program: Command, ctx: CliContext) => void]> = [
  [['ask'], registerAsk],
  [['send'], registerSend],
  [['chat'], registerChat],
  [['batch'], registerBatch],
  [['entities'], registerEntities],
  [['history'], registerHistory],
  [['window'], registerWindow],
  [['export'], registerExport],
  [['import'], registerImport],
  [['universes'], registerUniverses],
  [['respond'], registerRespond],
  [['image'], registerImage],
  [['logs'], registerLogs],
  [['prompts'], registerPrompts],
  [['serve'], registerServe],
  [['keys'], registerKeys],
  [['accounts'], registerAccounts],
  [['config'], registerConfig],
  [['login', 'logout'], registerLogin],
  [['models'], registerModels],
  [['completion'], registerCompletion],
  // Hidden: what the completion scripts call for entity names.
  [['__complete'], registerComplete],
];

const GLOBAL_WITH_VALUE = new Set(['--db', '--profile', '--backend']);

/** `mgpt --help` groups commands as gh does. */
const HELP_GROUPS: Record<string, string> = {
  ask: 'Talking:', send: 'Talking:', chat: 'Talking:', batch: 'Talking:',
  entities: 'Entities:', history: 'Entities:', window: 'Entities:', export: 'Entities:', import: 'Entities:',
  universes: 'Universes:', respond: 'Universes:', image: 'Universes:', logs: 'Universes:', prompts: 'Universes:',
  serve: 'Server:', keys: 'Server:', accounts: 'Server:',
  config: 'Setup:', login: 'Setup:', logout: 'Setup:', models: 'Setup:', completion: 'Setup:',
};

/** `-v` as well as `-V`/`--version`, where a global flag goes (commander takes one short flag). */
export function versionAlias(argv: string[]): string[] {
  const first = argv.findIndex((a) => !a.startsWith('-'));
  return argv.map((a, i) => (a === '-v' && (first < 0 || i < first) ? '--version' : a));
}

/**
 * Which commands to define for this command line: building all of them costs startup time on
 * every run, so only the one being run is defined; help and unknown commands get them all, a
 * bare --version none.
 */
export function commandsFor(argv: string[]): typeof COMMANDS {
  let first: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (GLOBAL_WITH_VALUE.has(a)) i++;
    else if (!a.startsWith('-')) {
      first = a;
      break;
    }
  }
  if (first === undefined) return argv.some((a) => a === '-V' || a === '-v' || a === '--version') && !argv.some((a) => a === '-h' || a === '--help') ? [] : COMMANDS;
  // Completion describes every command, so it needs them all defined.
  if (first === 'completion') return COMMANDS;
  const hit = COMMANDS.filter(([names]) => names.includes(first!));
  return hit.length ? hit : COMMANDS;
}

/** The commander root. Command modules are light; each loads the engine only when it runs. */
export function buildProgram(ctx: CliContext, argv: string[] = []): Command {
  const program = new Command('mgpt')
    .description('mgpt: long-lived conversations with a model whose memory lives with the platform')
    .version(ctx.version, '-V, --version', 'print the version (also -v)')
    .option('--db <path|url>', 'database of the local backend: a SQLite file or a postgres:// URL (env MGPT_DB)')
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
  for (const [, register] of commandsFor(argv)) register(program, ctx);
  for (const cmd of program.commands) cmd.helpGroup(HELP_GROUPS[cmd.name()] ?? 'Commands:');
  // Subcommands inherit output and exit handling from the root.
  for (const cmd of allCommands(program)) {
    cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(add --help for usage)');
  }
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}
