import { randomUUID } from 'node:crypto';
import type { AccountInfo } from '../../core/backend.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../core/errors.js';
import type { AccountRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import type { RateLimits } from '../../core/rate-limits.js';
import { checkLimits } from './rate-limits.js';

/** What accounts read: the store, the clock and ids. */
type AccountDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId'>;

/** Accounts own entities and hold a prepaid balance; null balance means unmetered. */
export class AccountService {
  constructor(private readonly deps: AccountDeps) {}

  async list(): Promise<AccountInfo[]> {
    return (await this.deps.store.accounts.list()).map(toInfo);
  }

  async create(name: string): Promise<AccountInfo> {
    if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
      throw new BadRequestError('account name: 1-64 letters, digits, dots, dashes or underscores');
    }
    if (await this.deps.store.accounts.byName(name)) throw new ConflictError(`account ${name} already exists`, { code: 'already_exists' });
    const row: AccountRow = { id: `acct_${this.deps.newId()}`, name, balanceUsd: null, userId: randomUUID(), createdAt: this.deps.clock.iso(), rpm: null, tpm: null };
    await this.deps.store.accounts.insert(row);
    return toInfo(row);
  }

  /** Finds an account by id or by name. */
  async find(ref: string): Promise<AccountInfo> {
    const row = (await this.deps.store.accounts.get(ref)) ?? (await this.deps.store.accounts.byName(ref));
    if (!row) throw new NotFoundError(`no account ${ref}`, { hint: 'list accounts with: mgpt accounts list' });
    return toInfo(row);
  }

  async topup(ref: string, usd: number): Promise<AccountInfo> {
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd <= 0 || usd > 1e9) {
      throw new BadRequestError('amount must be a positive number of dollars');
    }
    const account = await this.find(ref);
    await this.deps.store.accounts.topup(account.id, usd);
    return this.find(account.id);
  }

  /** Sets the account's default requests and tokens per minute for its keys (null clears one). */
  async update(ref: string, limits: Partial<RateLimits>): Promise<AccountInfo> {
    checkLimits(limits);
    const account = await this.find(ref);
    await this.deps.store.accounts.setLimits(account.id, limits);
    return this.find(account.id);
  }
}

function toInfo(r: AccountRow): AccountInfo {
  return { id: r.id, name: r.name, balanceUsd: r.balanceUsd, userId: r.userId, createdAt: r.createdAt, rpm: r.rpm, tpm: r.tpm };
}
