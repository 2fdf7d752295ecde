import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { activeProfileName, readConfigFile } from '../../config/config.js';
import type { ConfigFile, ModelRouteSetting } from '../../config/schema.js';
import { parseValue } from '../../config/schema.js';
import { openConfigStore } from '../../config/store.js';
import { BadRequestError, NotFoundError } from '../../core/errors.js';
import type { LearnedLimits } from '../../core/backend.js';
import { KNOWN_MODELS } from '../../core/models.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson, printTable } from '../output.js';

export interface AddModelOptions {
  provider: string;
  gguf?: string;
  threads?: string;
  context?: string;
  temperature?: string;
  maxTokens?: string;
  sharedSlots?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  route?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_:-]{0,63}$/;

export function registerModels(program: Command, ctx: CliContext): void {
  const models = examples(program.command('models').description('platform model ids and aliases, named models, and their provider routes'), [
    'mgpt models',
    'mgpt models add tiny --provider llama --gguf ./stories260K.gguf --route mgpt-1-27b',
  ]);
  examples(
    models.command('list', { isDefault: true }).description('list model ids and named models with their routes').option('--json', 'JSON output'),
    ['mgpt models', 'MGPT_PROVIDER=openai MGPT_PROVIDER_URL=http://127.0.0.1:11434/v1 mgpt models --json'],
  ).action((o: { json?: boolean }) => runModels(ctx, o));
  examples(
    models
      .command('reset-calibration')
      .description("forget what turns learned about a model's context and token count (after changing the server, or when a learned value is wrong)")
      .argument('[name]', 'a model id or named model (its route)')
      .option('--all', 'every model'),
    ['mgpt models reset-calibration mgpt-1-27b', 'mgpt models reset-calibration --all'],
  ).action((name: string | undefined, o: { all?: boolean }) => runResetCalibration(ctx, name, o));
  examples(
    models
      .command('add')
      .description('add a named model (a local GGUF on llama, or an OpenAI-compatible server) and optionally route ids to it')
      .argument('<name>', 'a name for it (letters, digits, _ : -)')
      .requiredOption('--provider <provider>', 'llama or openai')
      .option('--gguf <path>', 'llama: the GGUF model file')
      .option('--threads <n>', 'llama: CPU threads (default: cores - 1, at least 1)')
      .option('--context <n>', "the model's context in tokens (llama: the context it creates, default 2048; openai: unset = learned from the server)")
      .option('--temperature <t>', 'sampling temperature (llama default 0.8; openai: unset = not sent; 0 gives the same reply every time)')
      .option('--max-tokens <n>', 'longest reply in tokens (llama default 256; openai: unset = not sent)')
      .option('--shared-slots <n>', "openai: how many requests the server runs at once on one shared context (llama-server's slots with a unified KV cache); each turn is planned for the context / n (unset: the server's /props says, once the context is seen shared; 1: the whole context)")
      .option('--base-url <url>', 'openai: base URL ending in /v1')
      .option('--model <name>', "openai: the server's model name")
      .option('--api-key <key>', 'openai: API key')
      .option('--route <ids>', 'comma-separated model ids or aliases to route to it (e.g. mgpt-1-27b)'),
    [
      'mgpt models add tiny --provider llama --gguf ~/models/stories260K.gguf --threads 1 --context 512 --route mgpt-1-27b',
      'mgpt models add ollama --provider openai --base-url http://127.0.0.1:11434/v1 --model gemma3:27b --route mgpt-1-27b,game-1-lite-frozen',
      'mgpt models add local8k --provider openai --base-url http://127.0.0.1:8080/v1 --context 8192 --max-tokens 512 --temperature 0.7 --route mgpt-1-27b',
      'mgpt models add llama4 --provider openai --base-url http://127.0.0.1:8080/v1 --context 8192 --shared-slots 4 --route mgpt-1-27b',
    ],
  ).action((name: string, o: AddModelOptions) => runModelsAdd(ctx, name, o));
  examples(
    models.command('route').description('route a model id or alias to a named model').argument('<id>').argument('<name>'),
    ['mgpt models route game-1-lite-frozen tiny'],
  ).action((id: string, name: string) => runModelsRoute(ctx, id, name));
  examples(
    models.command('remove').description('remove a named model or an id\'s route').argument('<name>'),
    ['mgpt models remove tiny'],
  ).action((name: string) => runModelsRemove(ctx, name));
}

/** Validates one setting the same way `mgpt config set` does. */
function setting(key: string, raw: string | undefined, flag: string): unknown {
  if (raw === undefined) return undefined;
  const parsed = parseValue(`models.x.${key}`, raw);
  if ('error' in parsed) throw new BadRequestError(`${flag}: ${parsed.error.replace(/models\.x\./, '')}`);
  return parsed.value;
}

export async function runModelsAdd(ctx: CliContext, name: string, o: AddModelOptions): Promise<void> {
  if (!NAME.test(name)) throw new BadRequestError(`model name ${JSON.stringify(name)}: use 1-64 letters, digits, _ : -`);
  const entry: ModelRouteSetting = {
    contextSize: setting('contextSize', o.context, '--context') as number | undefined,
    temperature: setting('temperature', o.temperature, '--temperature') as number | undefined,
    maxTokens: setting('maxTokens', o.maxTokens, '--max-tokens') as number | undefined,
  };
  if (o.provider === 'llama') {
    if (!o.gguf) throw new BadRequestError('--provider llama needs --gguf PATH');
    if (o.baseUrl || o.model || o.apiKey || o.sharedSlots) throw new BadRequestError('--base-url, --model, --api-key and --shared-slots are for --provider openai');
    const gguf = resolve(o.gguf);
    if (!existsSync(gguf)) throw new NotFoundError(`no file ${gguf}`);
    Object.assign(entry, {
      provider: 'llama',
      gguf,
      threads: setting('threads', o.threads, '--threads'),
    });
  } else if (o.provider === 'openai') {
    if (!o.baseUrl) throw new BadRequestError('--provider openai needs --base-url URL');
    if (o.gguf || o.threads) throw new BadRequestError('--gguf and --threads are for --provider llama');
    Object.assign(entry, { provider: 'openai', sharedSlots: setting('sharedSlots', o.sharedSlots, '--shared-slots'), baseUrl: setting('baseUrl', o.baseUrl, '--base-url'), model: setting('model', o.model, '--model'), apiKey: o.apiKey });
  } else {
    throw new BadRequestError(`--provider must be llama or openai, got ${JSON.stringify(o.provider)}`);
  }
  const routes = (o.route ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const id of routes) {
    if (!NAME.test(id)) throw new BadRequestError(`--route: ${JSON.stringify(id)} is not a model id`);
    if (id === name) throw new BadRequestError(`--route: ${name} cannot route to itself`);
  }
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const clean = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
  store.set(`profiles.${profile}.models.${name}`, clean);
  for (const id of routes) store.set(`profiles.${profile}.models.${id}`, { use: name });
  ctx.io.stderr.write(`added model ${name} (${o.provider}) to profile ${profile}${routes.length ? `; ${routes.join(', ')} ${routes.length > 1 ? 'now use' : 'now uses'} it` : ''}\n`);
}

export async function runModelsRoute(ctx: CliContext, id: string, name: string): Promise<void> {
  if (!NAME.test(id)) throw new BadRequestError(`${JSON.stringify(id)} is not a model id`);
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const target = store.get(`profiles.${profile}.models.${name}`) as ModelRouteSetting | undefined;
  if (!target?.provider) throw new NotFoundError(`no named model ${name} in profile ${profile}`, { hint: 'add one: mgpt models add NAME --provider ...' });
  if (id === name) throw new BadRequestError(`${name} cannot route to itself`);
  store.set(`profiles.${profile}.models.${id}`, { use: name });
  ctx.io.stderr.write(`${id} now uses ${name}\n`);
}

export async function runModelsRemove(ctx: CliContext, name: string): Promise<void> {
  const store = await openConfigStore(ctx.env);
  const profile = activeProfileName(store.store as ConfigFile, ctx.env, ctx.flags);
  const all = (store.get(`profiles.${profile}.models`) ?? {}) as Record<string, ModelRouteSetting>;
  if (!all[name]) throw new NotFoundError(`no model ${name} in profile ${profile}`);
  const users = Object.entries(all).filter(([, r]) => r.use === name).map(([id]) => id);
  if (users.length) throw new BadRequestError(`${users.join(', ')} still route to ${name}`, { hint: `remove those first: mgpt models remove ${users[0]}` });
  store.delete(`profiles.${profile}.models.${name}`);
  ctx.io.stderr.write(`removed ${name} from profile ${profile}\n`);
}

export async function runResetCalibration(ctx: CliContext, name: string | undefined, o: { all?: boolean }): Promise<void> {
  if (!name === !o.all) throw new BadRequestError('name one model, or pass --all', { hint: 'mgpt models reset-calibration mgpt-1-27b' });
  const admin = await ctx.admin('models reset-calibration');
  const n = await admin.resetCalibration(name);
  const what = name ? `the model behind ${name}` : 'every model';
  ctx.io.stderr.write(n ? `forgot what turns had learned about ${what}; the next turns learn it again\n` : `nothing was learned about ${what}\n`);
}

/** The learned limits of each id, when the backend is the local engine (a remote server keeps its own). */
async function learned(ctx: CliContext, ids: string[]): Promise<Record<string, LearnedLimits | null>> {
  if (ctx.settings().backend !== 'local') return {};
  return (await ctx.admin('models')).learnedLimits(ids);
}

export async function runModels(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const s = ctx.settings();
  const file = readConfigFile(ctx.env);
  const configured = file.profiles?.[activeProfileName(file, ctx.env, ctx.flags)]?.models ?? {};
  const known = new Set(KNOWN_MODELS.map((m) => m.id));
  const entries = [
    ...KNOWN_MODELS.map((m) => ({ id: m.id, kind: m.kind, description: m.description })),
    ...Object.keys(configured)
      .filter((id) => !known.has(id))
      .map((id) => ({ id, kind: 'named', description: 'a named model (mgpt models add)' })),
  ];
  const limits = await learned(ctx, entries.map((m) => m.id));
  const rows = entries.map((m) => {
    const r = s.route(m.id);
    return {
      ...m,
      provider: r.provider,
      uses: configured[m.id]?.use ?? null,
      model: r.provider === 'llama' ? (r.gguf ?? null) : (r.model ?? m.id),
      baseUrl: r.baseUrl ?? null,
      ...(r.provider === 'llama' ? { threads: r.threads ?? null } : {}),
      contextSize: r.contextSize ?? null,
      maxTokens: r.maxTokens ?? null,
      temperature: r.temperature ?? null,
      ...(r.provider === 'openai' ? { sharedSlots: r.sharedSlots ?? null } : {}),
      learned: limits[m.id] ?? null,
    };
  });
  if (o.json) {
    printJson(ctx.io, { object: 'list', data: rows });
    return;
  }
  printTable(
    ctx,
    [
      { header: 'ID', value: (r) => r.id },
      { header: 'KIND', value: (r) => r.kind },
      { header: 'PROVIDER', value: (r) => (r.uses ? `${r.provider} (via ${r.uses})` : r.provider) },
      { header: 'MODEL', value: (r) => r.model ?? '-' },
      { header: 'BASE URL', value: (r) => r.baseUrl ?? '-' },
      { header: 'CONTEXT', value: (r) => contextOf(r.contextSize, r.learned) + (r.sharedSlots ? `, ${r.sharedSlots} slot${r.sharedSlots > 1 ? 's' : ''}` : ''), right: true },
      { header: 'FACTOR', value: (r) => (r.learned?.samples ? r.learned.factor.toFixed(2) : '-'), right: true },
    ],
    rows,
  );
}

/** The context a route's turns fit: the configured one wins; else what was learned, and how. */
function contextOf(configured: number | null, learnedLimits: LearnedLimits | null): string {
  if (configured !== null) return String(configured);
  if (learnedLimits?.contextTokens == null) return learnedLimits?.contextSource === 'shared' ? '- (shared)' : '-';
  return `${learnedLimits.contextTokens} (${learnedLimits.contextSource === 'shared' ? 'learned, shared' : 'learned'})`;
}
