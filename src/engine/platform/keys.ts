import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthError, BadRequestError, NotFoundError } from '../../core/errors.js';
import type { KeyInfo } from '../../core/backend.js';
import type { AccountService } from './accounts.js';
import type { EngineDeps } from '../deps.js';
import { MIN_ID_PREFIX, pickByRef } from '../../core/ref.js';
import type { RateLimits } from '../../core/rate-limits.js';
import type { KeyRow } from '../../store/types.js';
import type { Principal } from './principal.js';
import { checkLimits } from './rate-limits.js';

/** What keys read: the store and the clock. */
type KeyDeps = Pick<EngineDeps, 'store' | 'clock'>;

/**
 * The scopes keys carry (seed 000; seed 001 uses the first for every entity route:
 * docs/design.md#the-two-wire-contracts), and an extension: `mgpt.admin` lists, creates, limits and
 * revokes keys over HTTP (the console's keys page), as `mgpt keys` does on the server's own machine.
 */
export const SCOPES = ['mgpt.responses:create', 'mgpt.images:create', 'mgpt.logs:read', 'mgpt.admin'] as const;
export type Scope = (typeof SCOPES)[number];

const KEY = /^mgpt_live_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;


export type { Principal } from './principal.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** How many tokens' principals a server keeps. */
const CACHE_SIZE = 256;

/** API keys `mgpt_live_<public>.<secret>`: only a hash of the secret is stored, compared in constant time. */
export class KeyService {
  /**
   * Tokens already checked, with the store's external version at the check. A hit is used only
   * while that version is unchanged: a revocation by another process changes it, one by this
   * process clears the cache, so no cached key outlives its revocation. Only on stores that
   * offer the version (SQLite); elsewhere every request reads the key.
   */
  private readonly checked = new Map<string, { principal: Principal; version: number; expiresAt: string | null }>();

  constructor(
    private readonly deps: KeyDeps,
    private readonly accounts: AccountService,
  ) {}

  /** A new key; with `lifetimeMs`, one that stops working that long from now unless renewed (renew). */
  async create(accountRef: string, scopes: string[], limits: Partial<RateLimits> = {}, opts: { lifetimeMs?: number } = {}): Promise<KeyInfo> {
    checkLimits(limits);
    const account = await this.accounts.find(accountRef);
    const wanted = [...new Set(scopes)];
    const unknown = wanted.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (wanted.length === 0 || unknown.length) {
      throw new BadRequestError(`scopes must be some of ${SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
    }
    const publicId = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const row = {
      id: `key_${publicId}`,
      accountId: account.id,
      publicId,
      secretSha256: sha256(secret).toString('hex'),
      scopes: wanted.join(','),
      createdAt: this.deps.clock.iso(),
      revokedAt: null,
      rpm: limits.rpm ?? null,
      tpm: limits.tpm ?? null,
      expiresAt: opts.lifetimeMs === undefined ? null : this.expiry(opts.lifetimeMs),
    };
    await this.deps.store.keys.insert(row);
    return { ...keyInfo(row), key: `mgpt_live_${publicId}.${secret}` };
  }

  async list(): Promise<KeyInfo[]> {
    return (await this.deps.store.keys.list()).map(keyInfo);
  }

  /** Sets the key's own requests and tokens per minute (null: back to its account's default). */
  async update(id: string, limits: Partial<RateLimits>): Promise<KeyInfo> {
    checkLimits(limits);
    this.checked.clear();
    if (!(await this.deps.store.keys.setLimits(id, limits))) throw new NotFoundError(`no key ${id}`, { hint: 'list keys with: mgpt keys list' });
    return (await this.list()).find((k) => k.id === id)!;
  }

  /** A key id, or a unique prefix of one of 4+ characters. */
  async resolve(ref: string): Promise<string> {
    if (ref.length < MIN_ID_PREFIX) return ref;
    return pickByRef('key', ref, (await this.deps.store.keys.idsWithPrefix(ref, 11)).map((id) => ({ id })), 'list keys with: mgpt keys list').id;
  }

  /**
   * Moves an expiring key's end to `lifetimeMs` from now: its holder (a running console) calls this
   * well within the lifetime, so the key lives as long as the holder and a lifetime after it.
   */
  async renew(id: string, lifetimeMs: number): Promise<void> {
    if (!(await this.deps.store.keys.renew(id, this.expiry(lifetimeMs)))) throw new NotFoundError(`no expiring key ${id} that is not revoked`);
  }

  private expiry(lifetimeMs: number): string {
    if (!Number.isSafeInteger(lifetimeMs) || lifetimeMs < 1000) throw new BadRequestError('a key lifetime must be a whole number of milliseconds, at least 1000');
    return new Date(this.deps.clock.now() + lifetimeMs).toISOString();
  }

  async revoke(id: string): Promise<KeyInfo> {
    this.checked.clear();
    if (!(await this.deps.store.keys.revoke(id, this.deps.clock.iso()))) {
      const exists = (await this.list()).find((k) => k.id === id);
      throw exists ? new BadRequestError(`key ${id} is already revoked`) : new NotFoundError(`no key ${id}`);
    }
    return (await this.list()).find((k) => k.id === id)!;
  }

  /** The principal behind a bearer token; 401 for a missing, malformed, unknown or revoked key. */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (!token) throw new AuthError('missing bearer token', { hint: 'send Authorization: Bearer mgpt_live_…' });
    // Read before the key: a revocation committed after this read changes the version the entry is kept under.
    const version = this.deps.store.externalVersion?.();
    const hit = this.checked.get(token);
    // An expiring key is read again once its cached end has passed: a renewal may have moved it.
    if (hit && hit.version === version && !this.expired(hit.expiresAt)) return hit.principal;
    const { principal, expiresAt } = await this.check(token);
    if (version !== undefined) {
      this.checked.delete(token);
      this.checked.set(token, { principal, version, expiresAt });
      if (this.checked.size > CACHE_SIZE) this.checked.delete(this.checked.keys().next().value as string);
    }
    return principal;
  }

  private expired(expiresAt: string | null): boolean {
    return expiresAt !== null && Date.parse(expiresAt) <= this.deps.clock.now();
  }

  private async check(token: string): Promise<{ principal: Principal; expiresAt: string | null }> {
    const m = KEY.exec(token);
    if (!m) throw new AuthError('malformed API key');
    const row = await this.deps.store.keys.byPublicId(m[1]);
    // Hash either way, so an unknown key takes as long as a wrong secret.
    const given = sha256(m[2]);
    const stored = row ? Buffer.from(row.secretSha256, 'hex') : sha256('');
    if (!row || !timingSafeEqual(given, stored)) throw new AuthError('invalid API key');
    if (row.revokedAt) throw new AuthError('this API key was revoked');
    if (this.expired(row.expiresAt)) throw new AuthError(`this API key expired at ${row.expiresAt}`, { hint: 'a console key lives while its mgpt console runs: start the console again' });
    const account = await this.accounts.find(row.accountId);
    const limits = { rpm: row.rpm ?? account.rpm, tpm: row.tpm ?? account.tpm };
    return { principal: { keyId: row.id, accountId: account.id, userId: account.userId, scopes: row.scopes.split(','), limits }, expiresAt: row.expiresAt };
  }
}

function keyInfo(k: KeyRow): KeyInfo {
  return { id: k.id, account: k.accountId, scopes: k.scopes.split(','), createdAt: k.createdAt, revokedAt: k.revokedAt, expiresAt: k.expiresAt, rpm: k.rpm, tpm: k.tpm };
}
