import { Command } from 'commander';
import type { CliContext } from './context.js';
import { examples } from './help.js';
import { profileExists } from '../config/effective.js';
import { addJsonFlags, jsonFilterFor } from './json-flags.js';
import { warn } from './output.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * Top-level commands, by the names (and aliases) that select them. Each module is loaded only when
 * its command is defined, so `--version` and one command do not evaluate every other command's code.
 */
const COMMANDS: Array<[string[], () => Promise<Register>]> = [
  [['ask'], () => import('./commands/ask.js').then((m) => m.registerAsk)],
  [['send'], () => import('./commands/send.js').then((m) => m.registerSend)],
  [['chat'], () => import('./commands/chat.js').then((m) => m.registerChat)],
  [['batch'], () => import('./commands/batch.js').then((m) => m.registerBatch)],
  [['entities'], () => import('./commands/entities/index.js').then((m) => m.registerEntities)],
  [['history'], () => import('./commands/history.js').then((m) => m.registerHistory)],
  [['window'], () => import('./commands/window.js').then((m) => m.registerWindow)],
  [['rotations'], () => import('./commands/rotations.js').then((m) => m.registerRotations)],
  [['rotate'], () => import('./commands/rotate.js').then((m) => m.registerRotate)],
  [['memory'], () => import('./commands/memory/index.js').then((m) => m.registerMemory)],
  [['search'], () => import('./commands/search.js').then((m) => m.registerSearch)],
  [['export'], () => import('./commands/export.js').then((m) => m.registerExport)],
  [['import'], () => import('./commands/import.js').then((m) => m.registerImport)],
  [['universes'], () => import('./commands/universes.js').then((m) => m.registerUniverses)],
  [['respond'], () => import('./commands/respond.js').then((m) => m.registerRespond)],
  [['image'], () => import('./commands/image.js').then((m) => m.registerImage)],
  [['logs'], () => import('./commands/logs.js').then((m) => m.registerLogs)],
  [['usage'], () => import('./commands/usage.js').then((m) => m.registerUsage)],
  [['prompts'], () => import('./commands/prompts.js').then((m) => m.registerPrompts)],
  [['serve'], () => import('./commands/serve.js').then((m) => m.registerServe)],
  [['console'], () => import('./commands/console.js').then((m) => m.registerConsole)],
  [['mcp'], () => import('./commands/mcp.js').then((m) => m.registerMcp)],
  [['keys'], () => import('./commands/keys.js').then((m) => m.registerKeys)],
  [['accounts'], () => import('./commands/accounts.js').then((m) => m.registerAccounts)],
  [['config'], () => import('./commands/config/config.js').then((m) => m.registerConfig)],
  [['login', 'logout'], () => import('./commands/login.js').then((m) => m.registerLogin)],
  [['auth'], () => import('./commands/auth.js').then((m) => m.registerAuth)],
  [['models'], () => import('./commands/models.js').then((m) => m.registerModels)],
  [['completion'], () => import('./commands/completion.js').then((m) => m.registerCompletion)],
  // Hidden: what the completion scripts call for entity names.
  [['__complete'], () => import('./commands/complete.js').then((m) => m.registerComplete)],
];

const GLOBAL_WITH_VALUE = new Set(['--db', '--profile', '--backend']);

/** `mgpt --help` groups commands as gh does. */
const HELP_GROUPS: Record<string, string> = {
  ask: 'Talking:', send: 'Talking:', chat: 'Talking:', batch: 'Talking:',
  entities: 'Entities:', history: 'Entities:', window: 'Entities:', rotations: 'Entities:', rotate: 'Entities:', memory: 'Entities:', search: 'Entities:', export: 'Entities:', import: 'Entities:',
  universes: 'Universes:', respond: 'Universes:', image: 'Universes:', logs: 'Universes:', prompts: 'Universes:',
  serve: 'Server:', console: 'Server:', mcp: 'Server:', keys: 'Server:', accounts: 'Server:', usage: 'Server:',
  config: 'Setup:', login: 'Setup:', logout: 'Setup:', auth: 'Setup:', models: 'Setup:', completion: 'Setup:',
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

/** The commander root, with the commands this command line needs. Each loads the engine only when it runs. */
export async function buildProgram(ctx: CliContext, argv: string[] = []): Promise<Command> {
  const registers = await Promise.all(commandsFor(argv).map(([, load]) => load()));
  const program = new Command('mgpt')
    .description('mgpt: long-lived conversations with a model whose memory lives with the platform')
    .version(ctx.version, '-V, --version', 'print the version (also -v)')
    .option('--db <path|url>', 'database of the local backend: a SQLite file or a postgres:// URL (env MGPT_DB)')
    .option('--profile <name>', 'config profile (env MGPT_PROFILE)')
    .option('--backend <backend>', 'local (embedded engine) or remote (HTTP; env MGPT_BACKEND)')
    .option('--dev', 'remote: use the /backend-api/mgpt prefix')
    .option('--verbose', 'more detail: rotation notices, what recall added, ids, usage')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .exitOverride()
    .hook('preAction', (_root, action) => {
      Object.assign(ctx.flags, program.opts());
      warnMissingProfile(ctx, action);
      const jsonFilter = jsonFilterFor(action);
      if (jsonFilter) ctx.io = { ...ctx.io, jsonFilter };
    });
  examples(program, [
    'mgpt entities create --name ada --instructions "You are Ada."',
    'mgpt send ada "Hello again"',
    'mgpt window ada',
    'mgpt history ada --all --json',
    'mgpt export ada -o ada.tar',
  ]);
  for (const register of registers) register(program, ctx);
  for (const cmd of program.commands) cmd.helpGroup(HELP_GROUPS[cmd.name()] ?? 'Commands:');
  addJsonFlags(allCommands(program));
  // Subcommands inherit output and exit handling from the root.
  for (const cmd of allCommands(program)) {
    cmd.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(add --help for usage)');
  }
  return program;
}

/** Commands that write the profile they name, so a new one is not a mistake; completion never prints. */
const MAKES_PROFILE = new Set(['config set', 'config unset', 'login', 'completion', '__complete']);

/**
 * A `--profile` (or MGPT_PROFILE, or the file's `profile`) that names no profile gets one warning
 * line on stderr, whatever the command: otherwise the defaults would run silently.
 */
function warnMissingProfile(ctx: CliContext, action: Command): void {
  const path = [action.parent?.parent ? action.parent.name() : '', action.name()].filter(Boolean).join(' ');
  if (MAKES_PROFILE.has(path)) return;
  let missing: { profile: string; exists: boolean };
  try {
    missing = profileExists(ctx.env, ctx.flags);
  } catch {
    return; // an unreadable config.json is the command's error to report
  }
  if (!missing.exists) {
    warn(ctx, `profile ${missing.profile} does not exist: using the defaults (mgpt --profile ${missing.profile} config set KEY VALUE creates it)`);
  }
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}
