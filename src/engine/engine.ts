import { randomUUID } from 'node:crypto';
import { DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/entity-types.js';
import { isPostgresUrl } from '../core/db-url.js';
import { BadRequestError } from '../core/errors.js';
import type { GenerationResponse, ImageResponse } from '../core/universe-types.js';
import { DEFAULT_PRICES, type ModelPrice, type ModelRoute } from '../core/models.js';
import { createChatModel } from '../providers/registry.js';
import { openFileStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { AccountService } from './accounts.js';
import { RouteCalibration } from './calibration.js';
import { type Clock, type EngineDeps, systemClock } from './deps.js';
import { EntityService } from './entities.js';
import { checkBudget } from './entity-rules.js';
import { generateImage } from './images.js';
import { KeyService } from './keys.js';
import { LogService } from './logs.js';
import { type ResponseDelta, respond, respondEvents } from './respond.js';
import { UniverseService } from './universes.js';
import { PromptStore } from './prompts.js';
import { VersionedCache } from './versioned-cache.js';

export { DEFAULT_LEASE_TTL_MS } from '../core/entity-types.js';
import { DEFAULT_LEASE_TTL_MS } from '../core/entity-types.js';

export interface EngineOptions {
  /** SQLite file path, or an open Store (SQLite or PostgreSQL). */
  db: string | Store;
  /** Create the database file's directory when missing (the default data directory only). */
  createDbDir?: boolean;
  /** Where each platform model id goes; default: the built-in echo provider. */
  route?: (platformId: string) => ModelRoute;
  /** Directory of stored prompts (universes). */
  promptsDir?: string;
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
  readonly universes: UniverseService;
  readonly logs: LogService;
  readonly keys: KeyService;
  /** Stored prompts (the prompts directory) universes are created from. */
  readonly prompts: PromptStore;
  readonly deps: EngineDeps;

  constructor(opts: EngineOptions) {
    const limits = {
      windowBudget: checkBudget(opts.windowBudget ?? DEFAULT_WINDOW_BUDGET, 'window budget'),
      transcriptCap: positive(opts.transcriptCap ?? DEFAULT_TRANSCRIPT_CAP, 'transcript cap'),
      leaseTtlMs: positive(opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, 'lease TTL'),
    };
    if (typeof opts.db === 'string' && isPostgresUrl(opts.db)) {
      // Connecting is async: a URL taken for a file path here would make a folder named "postgres:".
      throw new BadRequestError('a PostgreSQL URL needs openEngine(), not new Engine()', { hint: 'await openEngine({ db: url, ... })' });
    }
    this.store = typeof opts.db === 'string' ? openFileStore(opts.db, { createDir: opts.createDbDir }) : opts.db;
    const clock = opts.clock ?? systemClock;
    this.deps = {
      store: this.store,
      windows: new VersionedCache(),
      universeCache: new VersionedCache(),
      limits,
      prices: { ...DEFAULT_PRICES, ...opts.prices },
      chatModel: (id, modelOverride) => {
        const route = opts.route?.(id) ?? { provider: 'echo' };
        return createChatModel(id, modelOverride ? { ...route, model: modelOverride } : route);
      },
      prompts: new PromptStore(opts.promptsDir ?? null),
      calibration: new RouteCalibration(this.store, clock),
      clock,
      newId: opts.newId ?? randomUUID,
      version: opts.version ?? '0.0.0',
    };
    this.entities = new EntityService(this.deps);
    this.accounts = new AccountService(this.deps);
    this.universes = new UniverseService(this.deps);
    this.logs = new LogService(this.deps);
    this.keys = new KeyService(this.deps, this.accounts);
    this.prompts = this.deps.prompts;
  }

  /** POST /responses (seed 000): validates `body` itself, so the server can pass JSON straight in. */
  respond(body: unknown, opts: { userId?: string; signal?: AbortSignal; xRequestId?: string; onDelta?: (text: string) => void } = {}): Promise<GenerationResponse> {
    const res = respond(this.deps, this.universes, body, opts);
    // Mirrored per call (seed 000 section 4.2), also on a replayed stored response.
    const x = opts.xRequestId;
    return x === undefined ? res : res.then((r) => ({ ...r, diagnostics: { ...r.diagnostics, xRequestId: x } }));
  }

  /** The same turn as events (the reply's text as it comes, then the response), for callers that stream it. */
  respondEvents(body: unknown, opts: { userId?: string; signal?: AbortSignal } = {}): AsyncGenerator<ResponseDelta, GenerationResponse> {
    return respondEvents(this.deps, this.universes, body, opts);
  }

  /** POST /images (seed 000). */
  generateImage(body: unknown, opts: { userId?: string; signal?: AbortSignal } = {}): Promise<ImageResponse> {
    return generateImage(this.deps, body, opts);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function positive(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new BadRequestError(`${what} must be a positive integer, got ${n}`);
  return n;
}
