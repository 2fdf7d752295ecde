import type { Command } from 'commander';
import { activeProfileName, configPath, readConfigFile } from '../../../config/config.js';
import { type EffectiveSetting, effectiveSettings } from '../../../config/effective.js';
import { type ConfigFile, KEYS, keySpec, parseValue } from '../../../config/schema.js';
import { openConfigStore } from '../../../config/store.js';
import { BadRequestError, NotFoundError } from '../../../core/errors.js';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { colors, printJson, printTable } from '../../output.js';

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
    config.command('get').description('print the value of a setting in effect, and (on a terminal) where it comes from: flag, environment, profile or default').argument('<key>').option('--json', 'JSON output'),
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
  examples(config.command('list').description('print every setting in effect, defaults included, with where each comes from').option('--json', 'JSON output'), [
    'mgpt config list',
  ]).action((o: JsonOpt) => runConfigList(ctx, o));
  examples(config.command('path').description('print where config.json lives').option('--json', 'JSON output'), [
    'mgpt config path',
  ]).action((o: JsonOpt) => runConfigPath(ctx, o));
}

export function runConfigGet(ctx: CliContext, key: string, o: JsonOpt): void {
  if (!keySpec(key)) throw new BadRequestError(`unknown config key ${JSON.stringify(key)}`, { hint: 'see: mgpt config set --help' });
  const found = effective(ctx).find((s) => s.key === key);
  if (!found) throw new NotFoundError(`${key} is not set`, { hint: `set it: mgpt config set ${key} VALUE` });
  if (o.json) return printJson(ctx.io, found);
  // Scripts get the bare value; a person also sees where it comes from.
  ctx.io.stdout.write(ctx.io.stdoutIsTTY ? `${String(found.value)}  ${colors(ctx, 'stdout').dim(`(${found.source})`)}\n` : `${String(found.value)}\n`);
}

/** The settings in effect (flags, environment, profile, defaults); a profile that does not exist was warned of before the command ran (program.ts). */
function effective(ctx: CliContext): EffectiveSetting[] {
  return effectiveSettings(ctx.env, ctx.flags);
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
  const settings = effective(ctx);
  const profile = activeProfileName(readConfigFile(ctx.env), ctx.env, ctx.flags);
  if (o.json) {
    printJson(ctx.io, {
      profile,
      settings: Object.fromEntries(settings.map((s) => [s.key, s.value])),
      sources: Object.fromEntries(settings.map((s) => [s.key, s.source])),
    });
    return;
  }
  printTable(
    ctx,
    [
      { header: 'KEY', value: (s) => s.key },
      { header: 'VALUE', value: (s) => String(s.value) },
      { header: 'SOURCE', value: (s) => s.source },
    ],
    settings,
  );
}

export function runConfigPath(ctx: CliContext, o: JsonOpt): void {
  const path = configPath(ctx.env);
  if (o.json) printJson(ctx.io, { path });
  else ctx.io.stdout.write(path + '\n');
}
