import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import { parsePromptText } from '../../core/prompt-file.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { readTextInput } from '../input.js';
import { colors, printJson, printTable } from '../output.js';

export function registerPrompts(program: Command, ctx: CliContext): void {
  const prompts = examples(
    program
      .command('prompts')
      .description('stored prompts, in the database (shared by every replica); a prompts directory of .md/.txt files is imported'),
    ['mgpt prompts add narrator -f narrator.md', 'mgpt prompts list', 'mgpt prompts import ./prompts'],
  );
  examples(prompts.command('list').alias('ls').description('list stored prompts').option('--json', 'JSON output'), [
    'mgpt prompts list --json',
  ]).action((o: { json?: boolean }) => runPromptsList(ctx, o));
  examples(prompts.command('show').description('print a stored prompt and its front matter').argument('<name>').option('--json', 'JSON output'), [
    'mgpt prompts show narrator',
  ]).action((name: string, o: { json?: boolean }) => runPromptsShow(ctx, name, o));
  examples(
    prompts
      .command('add')
      .description('store a prompt in the database (its text, output contract and additional instructions)')
      .argument('<name>')
      .argument('[text]', 'the prompt text; - reads stdin')
      .option('-f, --file <file>', 'read the prompt from a file (its own front matter is kept)')
      .option('--response-format <file>', 'a JSON file with the output contract (OpenAI response_format)')
      .option('--additional-instructions <text>', 'appended to the system prompt when a request asks for it')
      .option('--force', 'replace an existing prompt')
      .option('--json', 'JSON output'),
    [
      'mgpt prompts add narrator "You narrate a gentle fantasy world."',
      'mgpt prompts add quest -f quest.md --response-format contract.json --force',
    ],
  ).action((name: string, text: string | undefined, o: AddOptions) => runPromptsAdd(ctx, name, text, o));
  examples(prompts.command('rm').alias('remove').description('remove a stored prompt (universes made from it keep their copy)').argument('<name>'), [
    'mgpt prompts rm narrator',
  ]).action((name: string) => runPromptsRm(ctx, name));
  examples(
    prompts
      .command('import')
      .description('import NAME.md/.txt files (with optional YAML front matter) whose names were never stored; a removed name stays removed')
      .argument('[dir]', 'the directory (default: the prompts directory, MGPT_PROMPTS_DIR)')
      .option('--json', 'JSON output'),
    ['mgpt prompts import ./prompts', 'mgpt prompts import'],
  ).action((dir: string | undefined, o: { json?: boolean }) => runPromptsImport(ctx, dir, o));
}

export async function runPromptsRm(ctx: CliContext, name: string): Promise<void> {
  await (await ctx.admin('prompts rm')).removePrompt(name);
  ctx.io.stderr.write(`removed stored prompt ${name}\n`);
}

export async function runPromptsImport(ctx: CliContext, dir: string | undefined, o: { json?: boolean }): Promise<void> {
  const from = dir ?? ctx.settings().promptsDir;
  const r = await (await ctx.admin('prompts import')).importPrompts(from);
  if (o.json) return printJson(ctx.io, r);
  ctx.io.stderr.write(`imported ${r.imported.length} prompt${r.imported.length === 1 ? '' : 's'} from ${from}${r.imported.length ? `: ${r.imported.join(', ')}` : ''}\n`);
  if (r.skipped.length) ctx.io.stderr.write(`already stored or removed, left as they are: ${r.skipped.join(', ')}\n`);
}

interface AddOptions {
  file?: string;
  responseFormat?: string;
  additionalInstructions?: string;
  force?: boolean;
  json?: boolean;
}

export async function runPromptsList(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const list = await (await ctx.admin('prompts list')).listPrompts();
  if (o.json) return printJson(ctx.io, { object: 'list', data: list.map(({ text: _t, ...rest }) => ({ ...rest, chars: _t.length })) });
  if (list.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.io.stderr.write('no stored prompts: add one with `mgpt prompts add NAME -f FILE`, or `mgpt prompts import DIR`\n');
    return;
  }
  printTable(
    ctx,
    [
      { header: 'NAME', value: (p) => p.name },
      { header: 'CHARS', value: (p) => String(p.text.length), right: true },
      { header: 'CONTRACT', value: (p) => (p.responseFormat ? String(p.responseFormat.type ?? 'yes') : '-') },
      { header: 'ADDITIONAL', value: (p) => (p.additionalInstructions ? 'yes' : '-') },
      { header: 'MODIFIED', value: (p) => p.modifiedAt, time: true },
    ],
    list,
  );
}

export async function runPromptsShow(ctx: CliContext, name: string, o: { json?: boolean }): Promise<void> {
  const p = await (await ctx.admin('prompts show')).getPrompt(name);
  if (o.json) return printJson(ctx.io, p);
  const c = colors(ctx);
  if (ctx.io.stdoutIsTTY && p.file) ctx.io.stdout.write(c.dim(`# imported from ${p.file}`) + '\n');
  if (p.responseFormat) ctx.io.stdout.write(c.dim(`# responseFormat: ${JSON.stringify(p.responseFormat)}`) + '\n');
  if (p.additionalInstructions) ctx.io.stdout.write(c.dim(`# additionalInstructions: ${p.additionalInstructions}`) + '\n');
  ctx.io.stdout.write(p.text + '\n');
}

export async function runPromptsAdd(ctx: CliContext, name: string, text: string | undefined, o: AddOptions): Promise<void> {
  const admin = await ctx.admin('prompts add');
  let body = await readTextInput(ctx, 'prompt text', text, o.file);
  let responseFormat: Record<string, unknown> | undefined;
  let additionalInstructions = o.additionalInstructions;
  if (o.file) {
    // A file may carry its own front matter; the flags win over it.
    const parsed = await parsePromptText(body, o.file);
    body = parsed.text;
    responseFormat = parsed.responseFormat;
    additionalInstructions ??= parsed.additionalInstructions;
  }
  if (o.responseFormat) {
    try {
      responseFormat = JSON.parse(await readFile(o.responseFormat, 'utf8'));
    } catch (err) {
      throw new BadRequestError(`--response-format ${o.responseFormat}: ${(err as Error).message}`);
    }
  }
  const saved = await admin.addPrompt(name, { text: body, responseFormat, additionalInstructions }, { force: o.force });
  if (o.json) return printJson(ctx.io, saved);
  ctx.io.stderr.write(`stored prompt ${saved.name}\n`);
}
