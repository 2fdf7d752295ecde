import type { Command } from 'commander';
import type { KeyInfo } from '../../core/backend.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson, printTable, relativeTime } from '../output.js';
import { type LimitOptions, limitFlags, limitsOf, limitText } from './limits.js';

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = examples(program.command('keys').description('API keys for mgpt serve (only a hash of the secret is stored)'), [
    'mgpt keys create --account local --scopes mgpt.responses:create',
    'mgpt keys list',
    'mgpt keys update key_0123456789abcdef --rpm 60 --tpm 100000',
  ]);
  examples(
    limitFlags(
      keys
        .command('create')
        .description('create a key; the full key is printed once and cannot be shown again')
        .requiredOption('--account <account>', 'account id or name')
        .requiredOption('--scopes <scopes>', 'comma-separated: mgpt.responses:create, mgpt.images:create, mgpt.logs:read, mgpt.admin (keys and limits over HTTP)'),
      "the account's default (also when not given)",
    ).option('--json', 'JSON output: { id, key, scopes, account, rpm, tpm }'),
    ['mgpt keys create --account acme --scopes mgpt.responses:create,mgpt.logs:read --json', 'mgpt keys create --account acme --scopes mgpt.responses:create --rpm 20'],
  ).action((o: { account: string; scopes: string; json?: boolean } & LimitOptions) => runKeysCreate(ctx, o));
  examples(
    limitFlags(
      keys
        .command('update')
        .description("set a key's rate limits; every server on the database applies them to its next request")
        .argument('<id>', 'a key id or a unique prefix of 4+ characters'),
      "the account's default",
    ).option('--json', 'JSON output'),
    ['mgpt keys update key_0123456789abcdef --rpm 60 --tpm 100000', 'mgpt keys update key_0123 --rpm none'],
  ).action((id: string, o: { json?: boolean } & LimitOptions) => runKeysUpdate(ctx, id, o));
  examples(keys.command('list').alias('ls').description('list keys (never their secrets)').option('--json', 'JSON output'), [
    'mgpt keys list --json',
  ]).action((o: { json?: boolean }) => runKeysList(ctx, o));
  examples(keys.command('revoke').description('revoke a key at once').argument('<id>', 'a key id or a unique prefix of 4+ characters').option('--json', 'JSON output'), [
    'mgpt keys revoke key_0123456789abcdef',
  ]).action((id: string, o: { json?: boolean }) => runKeysRevoke(ctx, id, o));
}

function table(ctx: CliContext, rows: KeyInfo[]): void {
  printTable(
    ctx,
    [
      { header: 'ID', value: (k) => k.id, id: true },
      { header: 'ACCOUNT', value: (k) => k.account },
      { header: 'SCOPES', value: (k) => k.scopes.join(','), keep: true },
      { header: 'CREATED', value: (k) => k.createdAt, time: true },
      { header: 'REVOKED', value: (k) => k.revokedAt ?? '-', time: true },
      { header: 'RPM', value: (k) => limitText(k.rpm, 'account'), right: true },
      { header: 'TPM', value: (k) => limitText(k.tpm, 'account'), right: true },
      // Last, so the piped columns before it keep their places; a script gets the ISO time.
      { header: 'EXPIRES', value: (k) => (ctx.io.stdoutIsTTY ? expiryText(k.expiresAt, Date.now()) : (k.expiresAt ?? '-')) },
    ],
    rows,
  );
}

/** `in 4 min`, `expired 2 h ago`, or `-` for a key that never expires (every key but a console's). */
export function expiryText(iso: string | null, now: number): string {
  if (iso === null) return '-';
  const left = Date.parse(iso) - now;
  if (left <= 0) return `expired ${relativeTime(iso, now)}`;
  const s = Math.round(left / 1000);
  if (s < 90) return `in ${s} s`;
  if (s < 90 * 60) return `in ${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `in ${Math.round(s / 3600)} h`;
  return iso.slice(0, 10);
}

export async function runKeysCreate(ctx: CliContext, o: { account: string; scopes: string; json?: boolean } & LimitOptions): Promise<void> {
  const scopes = o.scopes.split(',').map((s) => s.trim()).filter(Boolean);
  const k = await (await ctx.admin('keys create')).createKey(o.account, scopes, limitsOf(o));
  if (o.json) return printJson(ctx.io, { id: k.id, key: k.key, scopes: k.scopes, account: k.account, rpm: k.rpm, tpm: k.tpm });
  ctx.io.stdout.write(`${k.key}\n`);
  ctx.io.stderr.write(`created ${k.id} for ${k.account} (${k.scopes.join(', ')}); the key is shown only now\n`);
}

export async function runKeysList(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const rows = await (await ctx.admin('keys list')).listKeys();
  if (o.json) return printJson(ctx.io, { object: 'list', data: rows });
  table(ctx, rows);
}

export async function runKeysUpdate(ctx: CliContext, id: string, o: { json?: boolean } & LimitOptions): Promise<void> {
  const k = await (await ctx.admin('keys update')).updateKey(id, limitsOf(o, true));
  if (o.json) return printJson(ctx.io, k);
  table(ctx, [k]);
}

export async function runKeysRevoke(ctx: CliContext, id: string, o: { json?: boolean }): Promise<void> {
  const k = await (await ctx.admin('keys revoke')).revokeKey(id);
  if (o.json) return printJson(ctx.io, k);
  ctx.io.stderr.write(`revoked ${k.id}\n`);
}
