import { randomUUID } from 'node:crypto';
import { DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/entity-types.js';
import { BadRequestError } from '../core/errors.js';
import { DEFAULT_PRICES, type ModelPrice, type ModelRoute } from '../core/models.js';
import { createChatModel } from '../providers/registry.js';
import { Store } from '../store/store.js';
import { AccountService } from './accounts.js';
import { type Clock, type EngineDeps, systemClock } from './deps.js';
import { EntityService } from './entities.js';
import { WindowCache } from './window-cache.js';

export const DEFAULT_LEASE_TTL_MS = 15_000;

export interface EngineOptions {
  /** SQLite file path (or an open Store). */
  db: string | Store;
  /** Where each platform model id goes; default: the built-in echo provider. */
  route?: (platformId: string) => ModelRoute;
  windowBudget?: number;
  transcriptCap?: number;
  leaseTtlMs?: number;
  prices?: Record<string, ModelPrice>;
  clock?: Clock;
  newId?: () => string;
  version?: string;
}

/** The embedded engine: one store, the services over it. */
export class Engine {
  readonly store: Store;
  readonly entities: EntityService;
  readonly accounts: AccountService;
  readonly deps: EngineDeps;

  constructor(opts: EngineOptions) {
    const limits = {
      windowBudget: positive(opts.windowBudget ?? DEFAULT_WINDOW_BUDGET, 'window budget'),
      transcriptCap: positive(opts.transcriptCap ?? DEFAULT_TRANSCRIPT_CAP, 'transcript cap'),
      leaseTtlMs: positive(opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, 'lease TTL'),
    };
    this.store = typeof opts.db === 'string' ? Store.open(opts.db) : opts.db;
    this.deps = {
      store: this.store,
      windows: new WindowCache(),
      limits,
      prices: { ...DEFAULT_PRICES, ...opts.prices },
      chatModel: (id) => createChatModel(id, opts.route?.(id) ?? { provider: 'echo' }),
      clock: opts.clock ?? systemClock,
      newId: opts.newId ?? randomUUID,
      version: opts.version ?? '0.0.0',
    };
    this.entities = new EntityService(this.deps);
    this.accounts = new AccountService(this.deps);
  }

  close(): void {
    this.store.close();
  }
}

function positive(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new BadRequestError(`${what} must be a positive integer, got ${n}`);
  return n;
}
