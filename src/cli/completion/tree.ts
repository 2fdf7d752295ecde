import type { Command, Option } from 'commander';

/** What a completion script needs to know about one option. */
export interface OptionNode {
  long?: string;
  short?: string;
  description: string;
  /** Whether the next word is this option's value; `file` when that value is a path. */
  value: 'none' | 'file' | 'other';
}

/** One positional argument; `entity` ones complete to entity names and short ids. */
export interface ArgNode {
  name: string;
  entity: boolean;
  variadic: boolean;
}

/** A command as the shells see it: its subcommands, options and positional arguments. */
export interface CommandNode {
  name: string;
  description: string;
  options: OptionNode[];
  args: ArgNode[];
  children: CommandNode[];
}

/** Value placeholders that name a path: `--db <path>`, `-o, --output <file>`, ... */
const FILE_VALUE = /path|file|dir/i;

/** The command tree as commander knows it, without hidden commands (`__complete`). */
export function commandTree(cmd: Command): CommandNode {
  const visible = new Set(cmd.createHelp().visibleCommands(cmd));
  return {
    name: cmd.name(),
    description: cmd.description(),
    options: [...cmd.options.filter((o) => !o.hidden).map(optionNode), { long: '--help', description: 'show help', value: 'none' }],
    args: cmd.registeredArguments.map((a) => ({ name: a.name(), entity: a.name() === 'entity', variadic: a.variadic })),
    children: cmd.commands.filter((c) => visible.has(c)).map(commandTree),
  };
}

function optionNode(o: Option): OptionNode {
  const takesValue = o.required || o.optional;
  const placeholder = /[<[]([^>\]]*)[>\]]/.exec(o.flags)?.[1] ?? '';
  return {
    long: o.long,
    short: o.short,
    description: o.description,
    value: !takesValue ? 'none' : FILE_VALUE.test(placeholder) ? 'file' : 'other',
  };
}

/** Every command path ("mgpt", "mgpt entities", ...) with its node. */
export function commandPaths(node: CommandNode, prefix = ''): Array<[string, CommandNode]> {
  const here = prefix ? `${prefix} ${node.name}` : node.name;
  return [[here, node], ...node.children.flatMap((c) => commandPaths(c, here))];
}

/** Every spelling (short and long) of the options anywhere in the tree whose next word is a value. */
export function valueFlags(root: CommandNode): string[] {
  const flags = new Set<string>();
  for (const [, n] of commandPaths(root)) {
    for (const o of n.options) if (o.value !== 'none') for (const f of [o.short, o.long]) if (f) flags.add(f);
  }
  return [...flags].sort();
}

/** The root's options that choose where entities come from (--db, --profile, ...): passed on to `mgpt __complete`. */
export function globalFlags(root: CommandNode): OptionNode[] {
  return root.options.filter((o) => o.long !== '--help' && o.long !== '--version' && o.long !== '--verbose');
}

/** Where the ENTITY argument of a command is among its positional words, if it has one. */
export function entityIndex(node: CommandNode): number {
  return node.args.findIndex((a) => a.entity);
}

/** Single-quoted for bash, zsh and fish alike. */
export const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
