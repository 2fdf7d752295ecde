import type { Command } from 'commander';
import { activeProfileName, configPath, readConfigFile } from '../../../config/config.js';
import { type ConfigFile, KEYS, isSecretKey, keySpec, maskSecret, parseValue } from '../../../config/schema.js';
import { openConfigStore } from '../../../config/store.js';
import { BadRequestError, NotFoundError } from '../../../core/errors.js';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { printJson, printTable } from '../../output.js';

interface JsonOpt {
  json?: boolean;
}

export function registerConfig(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('read and change settings (stored in config.json, mode 0600)');
  examples(config, [
    'mgpt config set models.mgpt-1-27b.provider openai',
    'mgpt config set models.mgpt-1-27b.baseUrl http://127.0.0.1:11434/v1',
    'mgpt config set models.mgpt-1-27b.model gemma3:27b',
    'mgpt config list --json',
  ]);
  examples(
    config.command('get').description('print one setting of the active profile').argument('<key>').option('--json', 'JSON output'),
    ['mgpt config get engine.windowBudget'],
  ).action((key: string, o: JsonOpt) => runConfigGet(ctx, key, o));
  examples(
    config
      .command('set')
      .description('change one setting of the active profile')
      .argument('<key>')
      .argument('<value>')
      .addHelpText('after', '\nKeys:\n' + KEYS.map((k) => `  ${k.pattern.source.replace(/^\^|\$$/g, '').replace(/\\\./g, '.')}  ${k.description}`).join('\n')),
    ['mgpt config set engine.windowBudget 16000', 'mgpt --profile work config set db ~/work/mgpt.db'],
  ).action((key: string, value: string) => runConfigSet(ctx, key, value));
  examples(config.command('unset').description('remove one setting of the active profile').argument('<key>'), [
    'mgpt config unset models.mgpt-1-27b',
  ]).action((key: string) => runConfigUnset(ctx, key));
  examples(config.command('list').description('print the settings of the active profile').option('--json', 'JSON output'), [
    'mgpt config list',
  ]).action((o: JsonOpt) => runConfigList(ctx, o));
  examples(config.command('path').description('print where config.json lives').option('--json', 'JSON output'), [
    'mgpt config path',
  ]).action((o: JsonOpt) => runConfigPath(ctx, o));
}

/** Settings of the active profile as dotted key -> value, secrets masked. */
function flatten(obj: unknown, prefix = '', out: Array<[string, unknown]> = []): Array<[string, unknown]> {
  if (typeof obj === 'object' && obj !== null && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.push([prefix, isSecretKey(prefix) && typeof obj === 'string' ? maskSecret(obj) : obj]);
  }
  return out;
}

function profileEntries(ctx: CliContext): { profile: string; entries: Array<[string, unknown]> } {
  const file = readConfigFile(ctx.env);
  const profile = activeProfileName(file, ctx.env, ctx.flags);
  return { profile, entries: flatten(file.profiles?.[profile] ?? {}) };
}

export function runConfigGet(ctx: CliContext, key: string, o: JsonOpt): void {
  if (!keySpec(key)) throw new BadRequestError(`unknown config key ${JSON.stringify(key)}`, { hint: 'see: mgpt config set --help' });
  const found = profileEntries(ctx).entries.find(([k]) => k === key);
  if (!found) throw new NotFoundError(`${key} is not set`);
  if (o.json) printJson(ctx.io, { key, value: found[1] });
  else ctx.io.stdout.write(`${String(found[1])}\n`);
}

export async function runConfigSet(ctx: CliContext, key: string, raw: string): Promise<void> {
  const parsed = parseValue(key, raw);
  if ('error' in parsed) throw new BadRequestError(parsed.error, { hint: 'see the keys in: mgpt config set --help' });
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  store.set(`profiles.${profile}.${key}`, parsed.value);
  ctx.io.stderr.write(`set ${key} in profile ${profile}\n`);
}

export async function runConfigUnset(ctx: CliContext, key: string): Promise<void> {
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const path = `profiles.${profile}.${key}`;
  if (!store.has(path)) throw new NotFoundError(`${key} is not set`);
  store.delete(path);
  ctx.io.stderr.write(`unset ${key} in profile ${profile}\n`);
}

export function runConfigList(ctx: CliContext, o: JsonOpt): void {
  const { profile, entries } = profileEntries(ctx);
  if (o.json) {
    printJson(ctx.io, { profile, settings: Object.fromEntries(entries) });
    return;
  }
  if (entries.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.io.stderr.write(`profile ${profile} has no settings: the local backend and the echo provider are used\n`);
    return;
  }
  printTable(ctx, [{ header: 'KEY', value: (r) => r[0] }, { header: 'VALUE', value: (r) => String(r[1]) }], entries);
}

export function runConfigPath(ctx: CliContext, o: JsonOpt): void {
  const path = configPath(ctx.env);
  if (o.json) printJson(ctx.io, { path });
  else ctx.io.stdout.write(path + '\n');
}
