import type { Command } from 'commander';
import { formatUsd } from '../../core/text/numbers.js';
import type { AccountInfo } from '../../core/backend.js';
import { BadRequestError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson, printTable } from '../output.js';
import { type LimitOptions, limitFlags, limitsOf, limitText } from './limits.js';

export function registerAccounts(program: Command, ctx: CliContext): void {
  const accounts = examples(program.command('accounts').description('accounts and prepaid balances (unmetered until the first top-up)'), [
    'mgpt accounts list',
    'mgpt accounts topup local 5',
    'mgpt accounts update acme --rpm 60 --tpm 100000',
  ]);
  examples(accounts.command('list').description('list accounts and balances').option('--json', 'JSON output'), [
    'mgpt accounts list',
  ]).action((o: { json?: boolean }) => runAccountsList(ctx, o));
  examples(accounts.command('create').description('create an account').argument('<name>').option('--json', 'JSON output'), [
    'mgpt accounts create acme',
  ]).action((name: string, o: { json?: boolean }) => runAccountsCreate(ctx, name, o));
  examples(
    accounts
      .command('topup')
      .description('add dollars to a balance; the first top-up turns metering on')
      .argument('<account>', 'account id or name (the local backend uses "local")')
      .argument('<usd>', 'amount in USD')
      .option('--json', 'JSON output'),
    ['mgpt accounts topup local 5', 'mgpt accounts topup acme 0.25 --json'],
  ).action((ref: string, usd: string, o: { json?: boolean }) => runAccountsTopup(ctx, ref, usd, o));
  examples(
    limitFlags(
      accounts
        .command('update')
        .description("set the default rate limits of the account's keys (a key's own limit wins)")
        .argument('<account>', 'account id or name'),
      'no limit',
    ).option('--json', 'JSON output'),
    ['mgpt accounts update acme --rpm 60 --tpm 100000', 'mgpt accounts update acme --tpm none'],
  ).action((ref: string, o: { json?: boolean } & LimitOptions) => runAccountsUpdate(ctx, ref, o));
}

function show(ctx: CliContext, rows: AccountInfo[]): void {
  printTable(
    ctx,
    [
      { header: 'ID', value: (a) => a.id },
      { header: 'NAME', value: (a) => a.name },
      { header: 'BALANCE', value: (a) => (a.balanceUsd === null ? 'unmetered' : formatUsd(a.balanceUsd)), right: true },
      { header: 'CREATED', value: (a) => a.createdAt, time: true },
      { header: 'RPM', value: (a) => limitText(a.rpm, 'none'), right: true },
      { header: 'TPM', value: (a) => limitText(a.tpm, 'none'), right: true },
    ],
    rows,
  );
}

export async function runAccountsList(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const rows = await (await ctx.admin('accounts list')).listAccounts();
  if (o.json) return printJson(ctx.io, { object: 'list', data: rows });
  show(ctx, rows);
}

export async function runAccountsCreate(ctx: CliContext, name: string, o: { json?: boolean }): Promise<void> {
  const account = await (await ctx.admin('accounts create')).createAccount(name);
  if (o.json) return printJson(ctx.io, account);
  show(ctx, [account]);
}

export async function runAccountsTopup(ctx: CliContext, ref: string, usd: string, o: { json?: boolean }): Promise<void> {
  const amount = Number(usd);
  if (!/^\d+(\.\d+)?$/.test(usd) || !(amount > 0)) throw new BadRequestError(`amount must be a positive number of dollars, got ${JSON.stringify(usd)}`);
  const account = await (await ctx.admin('accounts topup')).topupAccount(ref, amount);
  if (o.json) return printJson(ctx.io, account);
  show(ctx, [account]);
}

export async function runAccountsUpdate(ctx: CliContext, ref: string, o: { json?: boolean } & LimitOptions): Promise<void> {
  const account = await (await ctx.admin('accounts update')).updateAccount(ref, limitsOf(o, true));
  if (o.json) return printJson(ctx.io, account);
  show(ctx, [account]);
}
